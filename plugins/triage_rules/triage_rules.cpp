// A rule-based triage router. A request is light when its prompt has at most max_prompt_tokens
// tokens and it asks for at most max_new_tokens, and the hint rule agrees:
//   hint = "require"  only requests the client hinted as simple may be light (default)
//   hint = "trust"    a hinted request is light whatever its lengths
//   hint = "ignore"   the length rules alone decide
// Reason codes (sy_route_decision.reason): see enum Reason.
#include <new>
#include <string>

#include "plugin_entry.h"
#include "plugin_params.h"
#include "switchyard/abi/plugin.h"

namespace {

thread_local std::string g_create_error;

enum class Hint { require, trust, ignore };

enum Reason : uint32_t {
  kLightByLength = 1,     // within both length limits (and hinted, under "require")
  kLightByHint = 2,       // "trust": hinted, over a length limit
  kPromptTooLong = 3,     // full: prompt_len > max_prompt_tokens
  kTooManyNewTokens = 4,  // full: max_new_tokens over the limit
  kNotHinted = 5,         // full: "require" and no hint
};

struct Rules {
  uint64_t max_prompt_tokens = 64;
  uint64_t max_new_tokens = 32;
  Hint hint = Hint::require;
  std::string error;
};

constexpr const char* kParamNames[] = {"max_prompt_tokens", "max_new_tokens", "hint"};

bool parse_hint(const char* text, Hint& out) {
  const std::string v = text ? text : "";
  if (v == "require") return out = Hint::require, true;
  if (v == "trust") return out = Hint::trust, true;
  if (v == "ignore") return out = Hint::ignore, true;
  return false;
}

bool apply(Rules& r, const sy_param& p) {
  using sy::plugin::parse_uint;
  const std::string k = p.key ? p.key : "";
  if (k == "max_prompt_tokens") return parse_uint(p.value, 0, 1u << 24, r.max_prompt_tokens);
  if (k == "max_new_tokens") return parse_uint(p.value, 0, 1u << 24, r.max_new_tokens);
  if (k == "hint") return parse_hint(p.value, r.hint);
  return false;
}

sy_status create(const sy_param* params, size_t n, sy_router_t* out) {
  Rules rules;
  for (size_t i = 0; i < n; ++i) {
    if (apply(rules, params[i])) continue;
    g_create_error =
        sy::plugin::is_known(kParamNames, params[i].key)
            ? sy::plugin::bad_value("triage_rules", params[i]) +
                  (std::string(params[i].key) == "hint" ? " (expected require, trust or ignore)"
                                                        : "")
            : sy::plugin::unknown_param("triage_rules", params[i].key, kParamNames);
    return SY_ERR_INVALID_ARG;
  }
  auto* r = new (std::nothrow) Rules(rules);
  if (!r) return SY_ERR_OUT_OF_MEMORY;
  *out = reinterpret_cast<sy_router_t>(r);
  return SY_OK;
}

void destroy(sy_router_t h) {
  delete reinterpret_cast<Rules*>(h);
}

const char* last_error(sy_router_t h) {
  return h ? reinterpret_cast<Rules*>(h)->error.c_str() : g_create_error.c_str();
}

sy_status route(sy_router_t h, const sy_route_request* q, sy_route_decision* d) {
  const auto* r = reinterpret_cast<const Rules*>(h);
  const bool hinted = q->simple_hint != 0;
  uint32_t reason = 0;
  if (q->prompt_len > r->max_prompt_tokens)
    reason = kPromptTooLong;
  else if (q->max_new_tokens > r->max_new_tokens)
    reason = kTooManyNewTokens;
  else if (r->hint == Hint::require && !hinted)
    reason = kNotHinted;
  else
    reason = kLightByLength;
  if (reason != kLightByLength && r->hint == Hint::trust && hinted) reason = kLightByHint;
  const bool light = reason == kLightByLength || reason == kLightByHint;
  d->path = light ? SY_PATH_LIGHT : SY_PATH_FULL;
  d->reason = reason;
  return SY_OK;
}

const sy_router_iface kIface = {sizeof(sy_router_iface), 0, create, destroy, last_error, route};

SY_PLUGIN_NOTE(SY_PLUGIN_ROUTER, "triage_rules", "0.1.0", 0,
               "rule-based triage: prompt and output length limits, client hint");

}  // namespace

extern "C" SY_EXPORT sy_status sy_plugin_entry(uint32_t host_abi_version, const sy_host_api* host,
                                               sy_plugin_info* info) {
  (void)host;
  // Routers exist since 1.2: an older host has no slot for this plugin.
  if (const sy_status st = sy::plugin::negotiate(host_abi_version, info, "triage_rules", 2))
    return st;
  sy::plugin::describe_from_note(info, sy_plugin_note_);
  info->iface = &kIface;
  info->shutdown = nullptr;
  return SY_OK;
}
