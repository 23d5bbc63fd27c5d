/* A plugin whose entry fails with a reason, as one that finds no licence or device would. */
#include <stdio.h>

#include "switchyard/abi/plugin.h"

SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                    sy_plugin_info* info) {
  (void)host_abi_version;
  if (host && host->log) host->log(SY_LOG_INFO, "init_fail", "about to fail on purpose");
  snprintf(info->error_buf, info->error_buf_size, "init_fail: required resource %s is missing",
           "/dev/nonexistent");
  return SY_ERR_UNAVAILABLE;
}
