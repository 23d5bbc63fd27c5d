/* A plugin whose metadata note says "router 'other'" while its entry reports a scheduler named
 * note_mismatch: the host must refuse the disagreement. */
#include "switchyard/abi/plugin.h"

SY_PLUGIN_NOTE(SY_PLUGIN_SCHEDULER, "other", "0.0.1", 0, "a note that names another plugin");

static const sy_scheduler_iface kIface = {sizeof(sy_scheduler_iface), 0, 0, 0, 0, 0};

SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                    sy_plugin_info* info) {
  (void)host;
  (void)sy_plugin_note_;
  info->abi_version = SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR, SY_VERSION_MINOR(host_abi_version));
  info->kind = SY_PLUGIN_SCHEDULER;
  info->name = "note_mismatch";
  info->version = "0.0.1";
  info->description = "entry and note disagree";
  info->iface = &kIface;
  return SY_OK;
}
