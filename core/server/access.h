// Who may call what: API keys for /v1/* (and /tokenize, /detokenize, /apply-template), a
// separate admin key for /admin/*, an optional metrics key for /metrics; /health is always open.
// Keys are compared in time that depends only on the length of what the client sent, and never
// logged or echoed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sy::server {

struct AccessKeys {
  std::vector<std::string> api, admin, metrics;  // empty: that area is not key-protected
};

// "k1,k2" (from --api-key or SWITCHYARD_API_KEY) -> {"k1", "k2"}; blanks around items and empty
// items are dropped.
std::vector<std::string> split_keys(std::string_view list);
// The token of "Bearer <token>" (scheme case-insensitive); "" for anything else.
std::string bearer_token(std::string_view authorization);
// True when `presented` equals one of `keys`; every key is compared in full.
bool key_matches(const std::vector<std::string>& keys, std::string_view presented);
// 127.0.0.0/8, ::1 and their IPv4-mapped forms.
bool is_loopback(std::string_view addr);
// The area of a path, for the checks above.
enum class Area { open, api, admin, metrics };
Area area_of(std::string_view path);

}  // namespace sy::server
