// What scheduler.h and router.h share: a policy behind an opaque handle with its own last_error,
// and create() parsing the policy's typed options. A policy class provides
//   static constexpr sy::plugin::Info kInfo{name, version, description, capabilities};
//   struct Options {...};  static void declare(sy::plugin::Params<Options>&);   (both optional)
//   explicit Policy(const Options&)  (or a default constructor without Options)
// and may throw sy::plugin::Error (or anything else) from its constructor and its calls.
#pragma once

#include <memory>
#include <string>

#include "switchyard/sdk/params.h"
#include "switchyard/sdk/plugin.h"

namespace sy::plugin::detail {

template <class Policy>
concept HasOptions = requires { typename Policy::Options; };

template <class Policy>
struct Handle {
  std::unique_ptr<Policy> policy;
  std::string error;  // last_error of this handle
};

template <class Policy>
std::unique_ptr<Policy> make_policy(const sy_param* params, size_t n) {
  if constexpr (HasOptions<Policy>) {
    typename Policy::Options o{};
    Params<typename Policy::Options> spec(Policy::kInfo.name);
    Policy::declare(spec);
    spec.parse(params, n, o);
    return std::make_unique<Policy>(o);
  } else {
    struct None {};
    Params<None> none(Policy::kInfo.name);
    None unused;
    none.parse(params, n, unused);  // refuses any key
    return std::make_unique<Policy>();
  }
}

// The create entry of every policy kind: the error of a failed create is the plugin's create
// error (last_error(NULL)).
template <class Policy, class H>
sy_status create_handle(const sy_param* params, size_t n, H* out) {
  return guard(
      Policy::kInfo.name,
      [&] {
        if (!out)
          throw Error(SY_ERR_INVALID_ARG, std::string(Policy::kInfo.name) + ": out is NULL");
        auto h = std::make_unique<Handle<Policy>>();
        h->policy = make_policy<Policy>(params, n);
        *out = reinterpret_cast<H>(h.release());
      },
      [](const char* message) { set_create_error(message); });
}

template <class Policy, class H>
Handle<Policy>* handle_of(H h) {
  return reinterpret_cast<Handle<Policy>*>(h);
}

template <class Policy, class H>
void destroy_handle(H h) noexcept {
  delete handle_of<Policy>(h);
}

template <class Policy, class H>
const char* handle_error(H h) noexcept {
  return h ? handle_of<Policy>(h)->error.c_str() : create_error();
}

// The create, destroy and last_error entries of a policy kind whose handle type is H: the base of
// SchedulerPlugin and RouterPlugin, which add their call and table.
template <class Policy, class H>
struct HandleEntries {
  static sy_status create(const sy_param* params, size_t n, H* out) {
    return create_handle<Policy>(params, n, out);
  }
  static void destroy(H h) { destroy_handle<Policy>(h); }
  static const char* last_error(H h) { return handle_error<Policy>(h); }
};

// Runs f(policy) for a call on handle `h`; a failure leaves its message in the handle.
template <class Policy, class H, class F>
sy_status call_policy(H h, F&& f) noexcept {
  Handle<Policy>* handle = handle_of<Policy>(h);
  if (!handle) return SY_ERR_INVALID_ARG;
  return guard(
      Policy::kInfo.name, [&] { f(*handle->policy); },
      [handle](const char* message) { set_error(handle->error, message); });
}

}  // namespace sy::plugin::detail
