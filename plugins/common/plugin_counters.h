// Host counters from an in-tree scheduler plugin (header only, C ABI types only; ABI 1.3 headers).
#pragma once

#include <cstddef>

#include "switchyard/abi/plugin.h"

namespace sy::plugin {

// True when a struct written by the other side (struct_size first) covers member `field`.
#define SY_PLUGIN_COVERS(s, type, field) \
  ((s)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

// Adds to a counter of the engine that planned with `view`: through the ABI 1.3 context when
// both the host table and the view have it, else process-wide (an older host).
inline void count(const sy_host_api* host, const sy_sched_view* view, const char* name,
                  double delta) {
  if (!host) return;
  if (SY_PLUGIN_COVERS(host, sy_host_api, counter_add_to) && host->counter_add_to &&
      SY_PLUGIN_COVERS(view, sy_sched_view, host_ctx))
    host->counter_add_to(view->host_ctx, name, delta);
  else if (host->counter_add)
    host->counter_add(name, delta);
}

}  // namespace sy::plugin
