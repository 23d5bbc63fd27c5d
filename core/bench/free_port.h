// A TCP port on 127.0.0.1 that no socket holds at the moment of asking. Another process may
// take it before it is bound: for tests and for servers started as child processes only.
#pragma once

#include <cstdint>

namespace sy::bench {

uint16_t free_loopback_port();

}  // namespace sy::bench
