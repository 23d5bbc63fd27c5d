#include "host/backend.h"

#include "host/plugin_call.h"

namespace sy {

Buffer::~Buffer() {
  b_->api().buffer_free(b_->handle(), h_);
}
void Buffer::write(uint64_t offset, const void* src, uint64_t n) {
  bool threw = false;
  const sy_status st =
      plugin_call([&] { return b_->api().buffer_write(b_->handle(), h_, offset, src, n); }, &threw);
  b_->check(st, "buffer_write", threw);
}
void Buffer::read(uint64_t offset, void* dst, uint64_t n) const {
  bool threw = false;
  const sy_status st =
      plugin_call([&] { return b_->api().buffer_read(b_->handle(), h_, offset, dst, n); }, &threw);
  b_->check(st, "buffer_read", threw);
}
void* Buffer::host_ptr() const {
  return b_->api().buffer_host_ptr ? b_->api().buffer_host_ptr(b_->handle(), h_) : nullptr;
}

Backend::Backend(std::shared_ptr<Plugin> plugin, const Params& params)
    : plugin_(std::move(plugin)), api_(plugin_->backend_iface()) {
  if (!api_) throw BackendError(SY_ERR_INVALID_ARG, plugin_->name() + " is not a backend plugin");
  std::string why;
  if (const sy_status st = create_through(*api_, params, &h_, why); st != SY_OK)
    throw Error(st, plugin_->name() + ": create: " + why);
  device_.struct_size = sizeof(device_);
  bool threw = false;
  if (api_->device_info)
    check(plugin_call([&] { return api_->device_info(h_, &device_); }, &threw), "device_info",
          threw);
}

Backend::~Backend() {
  if (h_) api_->destroy(h_);
}

void Backend::check(sy_status st, const char* op, bool threw) const {
  if (st == SY_OK) return;
  throw Error(st, plugin_->name() + ": " + op + ": " +
                      plugin_message(threw ? nullptr : api_->last_error(h_), threw));
}

// The host's table is a covered copy (abi_table.h): a slot beyond the plugin's struct_size is
// NULL here, so one test serves every minor.
std::vector<std::string> Backend::missing_ops(const OpNeeds& needs) const {
  std::vector<std::string> missing;
#define SY_MISSING_ENTRY(name) \
  if (!api_->name) missing.push_back(#name);
  SY_BACKEND_REQUIRED_ENTRIES(SY_MISSING_ENTRY)
#undef SY_MISSING_ENTRY
#define SY_MISSING_OP(name, group, params, args) \
  if (needs.wants(OpGroup::group) && !api_->name) missing.push_back(#name);
  SY_BACKEND_OPS(SY_MISSING_OP)
#undef SY_MISSING_OP
  // Members added to older ops' arguments in 1.5: an older plugin would ignore them.
  if (SY_VERSION_MINOR(plugin_->abi_version()) < 5) {
    if (needs.attention_window) missing.push_back("attention with a sliding window (ABI 1.5)");
    if (needs.moe_routing_1_5)
      missing.push_back("moe_gate with sigmoid routing or a selection bias (ABI 1.5)");
    if (needs.moe_experts_1_5)
      missing.push_back("moe_matmul with per-expert bias, scale or stride (ABI 1.5)");
  }
  // Unary kinds added in 1.6: an older plugin refuses them mid-forward.
  if (SY_VERSION_MINOR(plugin_->abi_version()) < 6) {
    if (needs.unary_1_6) missing.push_back("unary with gelu or tanh (ABI 1.6)");
    if (needs.attention_sinks) missing.push_back("attention with sinks (ABI 1.6)");
    if (needs.attention_softcap) missing.push_back("attention with logit soft-capping (ABI 1.6)");
  }
  return missing;
}

void Backend::synchronize() {
  bool threw = false;
  check(plugin_call([&] { return api_->synchronize(h_); }, &threw), "synchronize", threw);
}

#define SY_EXPAND(...) __VA_ARGS__
#define SY_HOST_OP_DEF(op, group, params, args)                                           \
  void Backend::op params {                                                               \
    if (!api_->op)                                                                        \
      throw Error(SY_ERR_UNSUPPORTED, plugin_->name() + ": " #op ": not implemented");    \
    bool threw = false;                                                                   \
    check(plugin_call([&] { return api_->op(h_, SY_EXPAND args); }, &threw), #op, threw); \
  }
SY_BACKEND_OPS(SY_HOST_OP_DEF)
#undef SY_HOST_OP_DEF

std::unique_ptr<Buffer> Backend::alloc(uint64_t size) {
  sy_buffer_t b = nullptr;
  bool threw = false;
  check(plugin_call([&] { return api_->buffer_alloc(h_, size, &b); }, &threw), "buffer_alloc",
        threw);
  return std::make_unique<Buffer>(this, b, size);
}

std::unique_ptr<Buffer> Backend::from_host(void* ptr, uint64_t size) {
  if (api_->buffer_from_host && (plugin_->capabilities() & SY_CAP_ZERO_COPY_HOST)) {
    sy_buffer_t b = nullptr;
    bool threw = false;
    check(plugin_call([&] { return api_->buffer_from_host(h_, ptr, size, &b); }, &threw),
          "buffer_from_host", threw);
    return std::make_unique<Buffer>(this, b, size);
  }
  auto buf = alloc(size);
  buf->write(0, ptr, size);
  return buf;
}

}  // namespace sy
