/* Switchyard plugin entry point. Every plugin exports exactly one C symbol, sy_plugin_entry.
 *
 * Handshake: the host passes its packed ABI version and its service table, and an info struct
 * whose struct_size and error buffer it set. The plugin fills the info and returns SY_OK, or
 * writes why it cannot run into error_buf and returns an error. The plugin writes in abi_version
 * the version it implements; when its major equals the host's it negotiates down: min(host minor,
 * its own minor). The host refuses a different major and a minor above its own.
 * The entry and shutdown are called from one thread; no other call is made before the entry
 * returns or after shutdown begins. */
#ifndef SWITCHYARD_ABI_PLUGIN_H
#define SWITCHYARD_ABI_PLUGIN_H

#include "switchyard/abi/backend.h"
#include "switchyard/abi/host.h"
#include "switchyard/abi/router.h"
#include "switchyard/abi/scheduler.h"
#include "switchyard/abi/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SY_PLUGIN_ENTRY_SYMBOL "sy_plugin_entry"

typedef enum sy_plugin_kind {
  SY_PLUGIN_BACKEND = 1,   /* iface is a const sy_backend_iface* */
  SY_PLUGIN_SCHEDULER = 2, /* iface is a const sy_scheduler_iface* */
  SY_PLUGIN_ROUTER = 3,    /* since 1.2: iface is a const sy_router_iface* */
  SY_PLUGIN_KIND_FORCE_32BIT = 0x7fffffff
} sy_plugin_kind;

/* Capability flags a plugin may advertise. */
#define SY_CAP_ZERO_COPY_HOST (1ull << 0) /* backend: buffer_from_host wraps host memory */
#define SY_CAP_ASYNC (1ull << 1)          /* backend: ops are queued; synchronize() waits */
#define SY_CAP_CHUNKED_PREFILL (1ull << 8)  /* scheduler: may split prompts */
#define SY_CAP_PREEMPTION (1ull << 9)       /* scheduler: may preempt */

typedef struct sy_plugin_info {
  uint32_t struct_size; /* set by the host */
  uint32_t abi_version; /* set by the plugin: the version it implements (negotiated) */
  uint32_t kind;        /* sy_plugin_kind */
  uint32_t reserved0;
  const char* name;        /* static storage in the plugin */
  const char* version;     /* the plugin's own semver, for logs */
  const char* description; /* one line */
  uint64_t capabilities;   /* SY_CAP_* */
  const void* iface;       /* table for `kind`; static storage in the plugin */
  /* Called once before the library is unloaded; must join the plugin's threads. May be NULL. */
  void (*shutdown)(void);
  char* error_buf; /* set by the host: where the plugin explains a failed entry */
  size_t error_buf_size;
} sy_plugin_info;

typedef sy_status (*sy_plugin_entry_fn)(uint32_t host_abi_version, const sy_host_api* host,
                                        sy_plugin_info* info);

#ifdef __cplusplus
}
#endif
#endif
