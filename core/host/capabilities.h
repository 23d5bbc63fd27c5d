// Names of the SY_CAP_* flags a plugin advertises, for `switchyard plugins --verbose` and logs.
#pragma once

#include <cstdint>
#include <string>

namespace sy {

// "chunked_prefill, preemption"; "none" for 0; a bit the host does not know is shown in hex
// ("bit 0x4000"), so a newer plugin's flags are visible rather than dropped.
std::string capability_names(uint64_t caps);

}  // namespace sy
