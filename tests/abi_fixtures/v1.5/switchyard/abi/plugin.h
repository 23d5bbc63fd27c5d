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
#define SY_CAP_ZERO_COPY_HOST (1ull << 0)  /* backend: buffer_from_host wraps host memory */
#define SY_CAP_ASYNC (1ull << 1)           /* backend: ops are queued; synchronize() waits */
#define SY_CAP_CHUNKED_PREFILL (1ull << 8) /* scheduler: may split prompts */
#define SY_CAP_PREEMPTION (1ull << 9)      /* scheduler: may preempt */

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

/* ---- since 1.3 ---- */
/* Plugin metadata the host reads from the file without loading it (loading runs the library's
 * constructors and its entry: code). SY_PLUGIN_NOTE places it in an ELF note section,
 * ".note.switchyard": owner "Switchyard", type SY_NOTE_PLUGIN, fixed-size fields (no pointers,
 * so nothing needs relocating to read it). The host refuses a plugin whose note names another
 * ABI major, a newer minor or another kind before loading it; a file without a note (built with
 * an older SDK) is loaded as before. The note must agree with what the entry reports. */
#define SY_NOTE_OWNER "Switchyard"
#define SY_NOTE_PLUGIN 1u
#define SY_NOTE_FORMAT 1u

typedef struct sy_plugin_note {
  uint32_t namesz;          /* sizeof(SY_NOTE_OWNER) */
  uint32_t descsz;          /* sizeof(sy_plugin_note) - 24: the fields from `format` on */
  uint32_t type;            /* SY_NOTE_PLUGIN */
  char owner[12];           /* SY_NOTE_OWNER, NUL-padded to a multiple of 4 */
  uint32_t format;          /* SY_NOTE_FORMAT */
  uint32_t kind;            /* sy_plugin_kind */
  uint32_t abi_version;     /* SY_ABI_VERSION of the headers it was built with */
  uint32_t capabilities_lo; /* SY_CAP_* it advertises, low and high 32 bits */
  uint32_t capabilities_hi;
  uint32_t reserved;
  char name[64];         /* NUL-terminated; the <name> of switchyard_<kind>_<name>.so */
  char version[32];      /* the plugin's own version */
  char description[128]; /* one line */
} sy_plugin_note;

/* Use once per plugin at file scope: SY_PLUGIN_NOTE(SY_PLUGIN_SCHEDULER, "sjf", "1.0.0", caps,
 * "one line"); strings longer than their field fail to compile. */
#if defined(__GNUC__) || defined(__clang__)
#define SY_PLUGIN_NOTE(kind, name, version, capabilities, description)   \
  static const sy_plugin_note sy_plugin_note_                            \
      __attribute__((section(".note.switchyard"), used, aligned(4))) = { \
          sizeof(SY_NOTE_OWNER),                                         \
          (uint32_t)(sizeof(sy_plugin_note) - 24),                       \
          SY_NOTE_PLUGIN,                                                \
          SY_NOTE_OWNER,                                                 \
          SY_NOTE_FORMAT,                                                \
          (uint32_t)(kind),                                              \
          SY_ABI_VERSION,                                                \
          (uint32_t)((uint64_t)(capabilities)&0xffffffffu),              \
          (uint32_t)((uint64_t)(capabilities) >> 32),                    \
          0u,                                                            \
          name,                                                          \
          version,                                                       \
          description}
#else
#define SY_PLUGIN_NOTE(kind, name, version, capabilities, description) \
  typedef int sy_plugin_note_unsupported_compiler_
#endif

#ifdef __cplusplus
}
#endif
#endif
