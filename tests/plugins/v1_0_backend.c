/* A backend plugin built against the frozen ABI 1.0 headers only. It forwards to cpu_ref, which
 * it loads itself and asks for ABI 1.0, and hands the host a 1.0-sized table. Right after the
 * table sits a non-NULL pointer, where a 1.1 host would find estimate_step_ns if it read past
 * the table's struct_size: the host must see NULL there, never this pointer. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switchyard/abi/plugin.h"

#if SY_ABI_VERSION_MINOR != 0
#error "this fixture must be compiled against the ABI 1.0 headers"
#endif

static void past_the_table(void) {
  fprintf(stderr, "v1_0_backend: the host called a member past the table's struct_size\n");
  abort();
}

static struct {
  sy_backend_iface table;
  void (*beyond)(void);
} g_iface;

static void* g_lib;
static void (*g_inner_shutdown)(void);

static void shutdown(void) {
  if (g_inner_shutdown) g_inner_shutdown();
  if (g_lib) dlclose(g_lib);
  g_lib = NULL;
}

SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                    sy_plugin_info* info) {
  sy_plugin_info inner;
  sy_plugin_entry_fn entry;
  void* sym;
  sy_status st;
  if (SY_VERSION_MAJOR(host_abi_version) != SY_ABI_VERSION_MAJOR) return SY_ERR_VERSION;
  g_lib = dlopen(SY_WRAPPED_BACKEND, RTLD_NOW | RTLD_LOCAL);
  sym = g_lib ? dlsym(g_lib, SY_PLUGIN_ENTRY_SYMBOL) : NULL;
  if (!sym) {
    snprintf(info->error_buf, info->error_buf_size, "v1_0_backend: cannot load %s",
             SY_WRAPPED_BACKEND);
    return SY_ERR_UNAVAILABLE;
  }
  memcpy(&entry, &sym, sizeof entry);
  memset(&inner, 0, sizeof inner);
  inner.struct_size = sizeof inner;
  inner.error_buf = info->error_buf;
  inner.error_buf_size = info->error_buf_size;
  st = entry(SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR, 0), host, &inner);
  if (st != SY_OK) return st;
  /* The 1.0 part only: this table's sizeof is the 1.0 layout. */
  memcpy(&g_iface.table, inner.iface, sizeof g_iface.table);
  g_iface.table.struct_size = sizeof g_iface.table;
  g_iface.beyond = past_the_table;
  g_inner_shutdown = inner.shutdown;
  info->abi_version = SY_MAKE_VERSION(SY_ABI_VERSION_MAJOR, 0);
  info->kind = SY_PLUGIN_BACKEND;
  info->name = "v1_0_backend";
  info->version = "1.0.0";
  info->description = "cpu_ref through an ABI 1.0 table";
  info->capabilities = inner.capabilities;
  info->iface = &g_iface.table;
  info->shutdown = shutdown;
  return SY_OK;
}
