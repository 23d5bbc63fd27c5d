// The sy_device_info every in-tree CPU backend reports: the host CPU's model, vendor and memory.
#pragma once

#include "switchyard/abi/backend.h"

namespace sy::plugin {

// Fills a complete sy_device_info (struct_size = sizeof) for the CPU this process runs on.
sy_device_info cpu_device_info(uint64_t weight_dtypes, uint64_t kv_dtypes);

}  // namespace sy::plugin
