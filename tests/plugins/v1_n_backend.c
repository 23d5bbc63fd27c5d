/* A backend plugin built against one frozen minor's headers (abi_fixtures/v1.N, N given by
 * SY_FIXTURE_MINOR: 1.0, 1.3, 1.4, 1.5). It forwards to cpu_ref, which it loads itself and asks for
 * that minor, and hands the host a table of that minor's size with a non-NULL pointer right after
 * it: a newer host must read NULL for every member the minor did not have, and never call that
 * pointer. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switchyard/abi/plugin.h"

#if SY_ABI_VERSION_MINOR != SY_FIXTURE_MINOR
#error "compile against the frozen headers of SY_FIXTURE_MINOR"
#endif

#define SY_STR2(x) #x
#define SY_STR(x) SY_STR2(x)
#define SY_FIXTURE_NAME "v1_" SY_STR(SY_FIXTURE_MINOR) "_backend"

static void past_the_table(void) {
  fprintf(stderr, SY_FIXTURE_NAME ": the host called a member past the table's struct_size\n");
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
    snprintf(info->error_buf, info->error_buf_size, SY_FIXTURE_NAME ": cannot load %s",
             SY_WRAPPED_BACKEND);
    return SY_ERR_UNAVAILABLE;
  }
  memcpy(&entry, &sym, sizeof entry);
  memset(&inner, 0, sizeof inner);
  inner.struct_size = sizeof inner;
  inner.error_buf = info->error_buf;
  inner.error_buf_size = info->error_buf_size;
  st = entry(SY_ABI_VERSION, host, &inner);
  if (st != SY_OK) return st;
  /* This minor's part only: the table's sizeof is its layout. */
  memcpy(&g_iface.table, inner.iface, sizeof g_iface.table);
  g_iface.table.struct_size = sizeof g_iface.table;
  g_iface.beyond = past_the_table;
  g_inner_shutdown = inner.shutdown;
  info->abi_version = SY_ABI_VERSION;
  info->kind = SY_PLUGIN_BACKEND;
  info->name = SY_FIXTURE_NAME;
  info->version = "1." SY_STR(SY_FIXTURE_MINOR) ".0";
  info->description = "cpu_ref through a frozen minor's table";
  info->capabilities = inner.capabilities;
  info->iface = &g_iface.table;
  info->shutdown = shutdown;
  return SY_OK;
}
