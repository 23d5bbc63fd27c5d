/* Services the host lends to every plugin. Plugins never link against the host; they call
 * through this table, which stays valid until the plugin's shutdown() returns.
 * Thread contract: every entry may be called from any thread, concurrently. */
#ifndef SWITCHYARD_ABI_HOST_H
#define SWITCHYARD_ABI_HOST_H

#include "switchyard/abi/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sy_host_api {
  uint32_t struct_size;
  uint32_t abi_version; /* the host's packed ABI version */
  /* since 1.0 */
  /* Writes `message` into the host's log, tagged with the plugin's name. Copies the string. */
  void (*log)(sy_log_level level, const char* plugin, const char* message);
  /* Monotonic clock in nanoseconds, the same clock the engine stamps requests with. */
  int64_t (*now_ns)(void);
  /* Adds `delta` to the host counter `name` (created on first use; exported as a metric). */
  void (*counter_add)(const char* name, double delta);

  /* ---- since 1.3 (read only when struct_size covers them) ---- */
  /* Adds `delta` to counter `name` of one engine instance: `host_ctx` is the context the host
   * handed the plugin (sy_sched_view.host_ctx), so in a process serving several variants each
   * engine's counters stay its own. NULL host_ctx: a process-wide counter, as counter_add.
   * (counter_add called during a plan() still lands in the planning engine's counters.) */
  void (*counter_add_to)(void* host_ctx, const char* name, double delta);
} sy_host_api;

#ifdef __cplusplus
}
#endif
#endif
