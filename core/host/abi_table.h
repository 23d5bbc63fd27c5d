// Reading a plugin's function table whatever minor version it was built for. A plugin built
// against older headers hands over a shorter table; the host keeps a host-sized copy in which
// every member past the plugin's struct_size is NULL, so callers only test `if (api.fn)` (the
// ORT `covered && fn` rule, applied once here instead of at every call site).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "switchyard/abi/plugin.h"

namespace sy {

// True when a struct of `struct_size` bytes holds the member at [offset, offset + size).
constexpr bool covers(uint32_t struct_size, size_t offset, size_t size) {
  return offset + size <= struct_size;
}

// The table's own struct_size, the first member of every table.
inline uint32_t table_struct_size(const void* table) {
  uint32_t size = 0;
  std::memcpy(&size, table, sizeof size);
  return size;
}

// A copy of `plugin_table` with the host's layout: members the plugin's struct_size covers
// completely are copied, the rest are zero. struct_size keeps the plugin's value.
template <typename Table>
Table covered_table(const void* plugin_table) {
  static_assert(alignof(Table) == alignof(void*), "tables are a header then pointers");
  Table t{};
  const uint32_t size = table_struct_size(plugin_table);
  // Round down to whole pointers: a member the plugin only partly covers does not exist.
  const size_t n = std::min<size_t>(size, sizeof(Table)) / sizeof(void*) * sizeof(void*);
  std::memcpy(&t, plugin_table, n);
  t.struct_size = size;
  return t;
}

// The smallest table a plugin that negotiated ABI 1.<minor> may hand over: the members that
// minor had when it was first released. Members appended to the same block later are optional,
// so a plugin built before such an append keeps loading.
constexpr uint32_t min_table_size(uint32_t kind, uint32_t minor) {
  if (kind == SY_PLUGIN_SCHEDULER) return offsetof(sy_scheduler_iface, plan) + sizeof(void*);
  if (kind == SY_PLUGIN_ROUTER) return offsetof(sy_router_iface, route) + sizeof(void*);
  if (minor == 0) return SY_BACKEND_IFACE_SIZE_1_0;
  return offsetof(sy_backend_iface, estimate_step_ns) + sizeof(void*);
}

}  // namespace sy
