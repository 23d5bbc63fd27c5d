// The service table the host lends to plugins, and the counters plugins feed.
#pragma once

#include <map>
#include <string>

#include "switchyard/abi/host.h"

namespace sy {

const sy_host_api* host_api();
int64_t now_ns();
// Snapshot of counters added through sy_host_api.counter_add (and by the host itself).
std::map<std::string, double> host_counters();
void host_counter_add(const std::string& name, double delta);

}  // namespace sy
