/* A plugin that implements a minor version newer than the host's without negotiating down. */
#include "switchyard/abi/plugin.h"

static const sy_scheduler_iface kIface = {sizeof(sy_scheduler_iface), 0, 0, 0, 0, 0};

SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                    sy_plugin_info* info) {
  (void)host;
  info->abi_version = SY_MAKE_VERSION(SY_VERSION_MAJOR(host_abi_version),
                                      SY_VERSION_MINOR(host_abi_version) + 1);
  info->kind = SY_PLUGIN_SCHEDULER;
  info->name = "newer_minor";
  info->iface = &kIface;
  return SY_OK;
}
