#include "server/dsml_call.h"

#include <nlohmann/json.hpp>

namespace sy::server::dsml {
namespace {

const std::string kInvokeOpen = "<" + std::string(kMarker) + "invoke name=\"";
const std::string kInvokeClose = "</" + std::string(kMarker) + "invoke>";
const std::string kParamOpen = "<" + std::string(kMarker) + "parameter name=\"";
const std::string kParamClose = "</" + std::string(kMarker) + "parameter>";

size_t skip_space(std::string_view s, size_t at) {
  while (at < s.size() && (s[at] == ' ' || s[at] == '\n')) ++at;
  return at;
}

// The invoke's parameters, `body` being what lies between its opening and closing tags; false
// when they do not read as parameters.
bool read_parameters(std::string_view body, nlohmann::ordered_json& args) {
  for (size_t at = skip_space(body, 0); at < body.size(); at = skip_space(body, at)) {
    if (body.substr(at, kParamOpen.size()) != kParamOpen) return false;
    at += kParamOpen.size();
    const size_t key_end = body.find('"', at);
    if (key_end == std::string_view::npos) return false;
    const std::string key(body.substr(at, key_end - at));
    at = key_end + 1;
    constexpr std::string_view kString = " string=\"true\">", kJson = " string=\"false\">";
    const bool is_string = body.substr(at, kString.size()) == kString;
    if (!is_string && body.substr(at, kJson.size()) != kJson) return false;
    at += is_string ? kString.size() : kJson.size();
    const size_t value_end = body.find(kParamClose, at);
    if (value_end == std::string_view::npos) return false;
    const std::string_view value = body.substr(at, value_end - at);
    at = value_end + kParamClose.size();
    auto parsed = nlohmann::ordered_json::parse(value, nullptr, false);
    // Not JSON where JSON was announced: the model's text, as a string.
    args[key] = is_string || parsed.is_discarded() ? nlohmann::ordered_json(value) : parsed;
  }
  return true;
}

}  // namespace

Next next_invoke(std::string_view text, size_t& at, Call& call) {
  const size_t start = skip_space(text, at);
  const std::string_view rest = text.substr(start);
  if (rest.starts_with("</")) return Next::close;
  if (rest.size() < kInvokeOpen.size())
    return std::string_view(kInvokeOpen).starts_with(rest) ? Next::more : Next::other;
  if (!rest.starts_with(kInvokeOpen)) return Next::other;
  const size_t name_end = rest.find("\">", kInvokeOpen.size());
  const size_t close = rest.find(kInvokeClose);
  if (close == std::string_view::npos) return Next::more;
  if (name_end == std::string_view::npos || name_end > close) return Next::other;
  call.name = std::string(rest.substr(kInvokeOpen.size(), name_end - kInvokeOpen.size()));
  auto args = nlohmann::ordered_json::object();
  if (call.name.empty() || !read_parameters(rest.substr(name_end + 2, close - name_end - 2), args))
    return Next::other;
  call.arguments = args.dump();
  at = start + close + kInvokeClose.size();
  return Next::call;
}

}  // namespace sy::server::dsml
