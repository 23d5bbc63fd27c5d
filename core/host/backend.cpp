#include "host/backend.h"

namespace sy {

Buffer::~Buffer() {
  b_->api().buffer_free(b_->handle(), h_);
}
void Buffer::write(uint64_t offset, const void* src, uint64_t n) {
  b_->check(b_->api().buffer_write(b_->handle(), h_, offset, src, n), "buffer_write");
}
void Buffer::read(uint64_t offset, void* dst, uint64_t n) const {
  b_->check(b_->api().buffer_read(b_->handle(), h_, offset, dst, n), "buffer_read");
}
void* Buffer::host_ptr() const {
  return b_->api().buffer_host_ptr ? b_->api().buffer_host_ptr(b_->handle(), h_) : nullptr;
}

Backend::Backend(std::shared_ptr<Plugin> plugin, const Params& params)
    : plugin_(std::move(plugin)), api_(plugin_->backend_iface()) {
  if (!api_) throw BackendError(SY_ERR_INVALID_ARG, plugin_->name() + " is not a backend plugin");
  std::vector<sy_param> p;
  for (const auto& [k, v] : params) p.push_back({k.c_str(), v.c_str()});
  const sy_status st = api_->create(p.data(), p.size(), &h_);
  if (st != SY_OK) {
    const char* e = api_->last_error(nullptr);
    throw BackendError(st, plugin_->name() + ": create: " + (e ? e : "unknown error"));
  }
  device_.struct_size = sizeof(device_);
  if (api_->device_info) check(api_->device_info(h_, &device_), "device_info");
}

Backend::~Backend() {
  if (h_) api_->destroy(h_);
}

void Backend::check(sy_status st, const char* op) const {
  if (st == SY_OK) return;
  const char* e = api_->last_error(h_);
  throw BackendError(st, plugin_->name() + ": " + op + ": " + (e && *e ? e : "unknown error"));
}

std::vector<std::string> Backend::missing_ops() const {
  std::vector<std::string> missing;
#define SY_REQUIRE_OP(op) \
  if (!api_->op) missing.push_back(#op);
  SY_REQUIRE_OP(buffer_write)
  SY_REQUIRE_OP(buffer_read)
  SY_REQUIRE_OP(synchronize)
  SY_REQUIRE_OP(get_rows)
  SY_REQUIRE_OP(matmul)
  SY_REQUIRE_OP(rms_norm)
  SY_REQUIRE_OP(rope)
  SY_REQUIRE_OP(add)
  SY_REQUIRE_OP(swiglu)
  SY_REQUIRE_OP(softmax)
  SY_REQUIRE_OP(kv_store)
  SY_REQUIRE_OP(attention)
#undef SY_REQUIRE_OP
  return missing;
}

// A shorter (older) table does not have the slot at all: never read past its struct_size.
#define SY_REQUIRE_OPTIONAL_OP(op)                                                        \
  if (api_->struct_size < offsetof(sy_backend_iface, op) + sizeof(api_->op) || !api_->op) \
    missing.push_back(#op);

std::vector<std::string> Backend::missing_hybrid_ops(bool ssm, bool moe) const {
  std::vector<std::string> missing;
  if (ssm) {
    SY_REQUIRE_OPTIONAL_OP(ssm_conv)
    SY_REQUIRE_OPTIONAL_OP(ssm_scan)
  }
  if (moe) {
    SY_REQUIRE_OPTIONAL_OP(moe_gate)
    SY_REQUIRE_OPTIONAL_OP(moe_matmul)
    SY_REQUIRE_OPTIONAL_OP(moe_combine)
  }
  return missing;
}

std::vector<std::string> Backend::missing_model_ops(bool rope_ext, bool bias_scale) const {
  std::vector<std::string> missing;
  if (rope_ext) SY_REQUIRE_OPTIONAL_OP(rope_ext)
  if (bias_scale) SY_REQUIRE_OPTIONAL_OP(bias_scale)
  return missing;
}
#undef SY_REQUIRE_OPTIONAL_OP

std::unique_ptr<Buffer> Backend::alloc(uint64_t size) {
  sy_buffer_t b = nullptr;
  check(api_->buffer_alloc(h_, size, &b), "buffer_alloc");
  return std::make_unique<Buffer>(this, b, size);
}

std::unique_ptr<Buffer> Backend::from_host(void* ptr, uint64_t size) {
  if (api_->buffer_from_host && (plugin_->capabilities() & SY_CAP_ZERO_COPY_HOST)) {
    sy_buffer_t b = nullptr;
    check(api_->buffer_from_host(h_, ptr, size, &b), "buffer_from_host");
    return std::make_unique<Buffer>(this, b, size);
  }
  auto buf = alloc(size);
  buf->write(0, ptr, size);
  return buf;
}

}  // namespace sy
