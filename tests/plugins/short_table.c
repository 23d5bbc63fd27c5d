/* A backend that negotiates ABI 1.1 but hands over a table of the 1.0 size: a plugin that
 * claims a minor must provide at least the members that minor was released with. */
#include "switchyard/abi/plugin.h"

static sy_backend_iface g_iface;

SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                    sy_plugin_info* info) {
  (void)host;
  (void)host_abi_version;
  g_iface.struct_size = (uint32_t)SY_BACKEND_IFACE_SIZE_1_0;
  info->abi_version = SY_MAKE_VERSION(1, 1);
  info->kind = SY_PLUGIN_BACKEND;
  info->name = "short_table";
  info->iface = &g_iface;
  return SY_OK;
}
