#include "server/access.h"

#include "server/http/message.h"

namespace sy::server {

std::vector<std::string> split_keys(std::string_view list) {
  std::vector<std::string> out;
  for (std::string_view k : http::comma_items(list))
    if (!k.empty()) out.emplace_back(k);
  return out;
}

std::string bearer_token(std::string_view a) {
  while (!a.empty() && a.front() == ' ') a.remove_prefix(1);
  if (a.size() < 7 || !http::iequals(a.substr(0, 7), "bearer ")) return "";
  a.remove_prefix(7);
  while (!a.empty() && a.front() == ' ') a.remove_prefix(1);
  while (!a.empty() && a.back() == ' ') a.remove_suffix(1);
  return std::string(a);
}

bool key_matches(const std::vector<std::string>& keys, std::string_view presented) {
  unsigned matched = 0;
  for (const std::string& k : keys) {
    if (k.empty()) continue;
    // Walk the presented bytes whatever happens, so the time says nothing about the key.
    unsigned diff = presented.size() != k.size();
    for (size_t i = 0; i < presented.size(); ++i)
      diff |=
          static_cast<unsigned char>(presented[i]) ^ static_cast<unsigned char>(k[i % k.size()]);
    matched |= diff == 0;
  }
  return matched != 0 && !presented.empty();
}

bool is_loopback(std::string_view addr) {
  if (addr == "::1") return true;
  if (addr.substr(0, 7) == "::ffff:") addr.remove_prefix(7);
  return addr.substr(0, 4) == "127.";
}

Area area_of(std::string_view path) {
  if (path == "/health") return Area::open;
  if (path == "/metrics") return Area::metrics;
  if (path.substr(0, 7) == "/admin/") return Area::admin;
  return Area::api;  // /v1/*, /tokenize, /detokenize, /apply-template and anything else
}

}  // namespace sy::server
