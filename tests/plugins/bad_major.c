/* A scheduler plugin that claims ABI major 2: the host must refuse it. C99 on purpose: it also
 * proves the ABI headers compile as C. */
#include "switchyard/abi/plugin.h"

SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                    sy_plugin_info* info) {
  (void)host_abi_version;
  (void)host;
  info->abi_version = SY_MAKE_VERSION(2, 0);
  info->kind = SY_PLUGIN_SCHEDULER;
  info->name = "bad_major";
  info->version = "0.0.1";
  info->description = "claims ABI 2.0";
  info->iface = 0;
  return SY_OK;
}
