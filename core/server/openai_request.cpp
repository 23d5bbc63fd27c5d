#include "server/openai_request.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "server/api_error.h"

namespace sy::server {
namespace {

using nlohmann::json;

const char* kind(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    case json::value_t::string:
      return "a string";
    case json::value_t::array:
      return "an array";
    default:
      return "an object";
  }
}

[[noreturn]] void bad_type(const std::string& key, const char* expected, const json& v) {
  throw ApiError(
      400,
      "Invalid type for '" + key + "': expected " + expected + ", but got " + kind(v) + " instead.",
      "invalid_request_error", key, "invalid_type");
}

[[noreturn]] void bad_value(const std::string& key, const std::string& why) {
  throw ApiError(400, "Invalid '" + key + "': " + why, "invalid_request_error", key,
                 "invalid_value");
}

std::string num(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

int64_t get_int(const json& o, const std::string& key, int64_t lo, int64_t hi) {
  const json& v = o.at(key);
  if (!v.is_number_integer()) bad_type(key, "an integer", v);
  // Unsigned values above INT64_MAX read as negative through get<int64_t>: check the sign first.
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
    bad_value(key, "integer above maximum value. Expected a value <= " + std::to_string(hi) +
                       ", but got " + v.dump() + " instead.");
  const int64_t x = v.get<int64_t>();
  if (x < lo)
    bad_value(key, "integer below minimum value. Expected a value >= " + std::to_string(lo) +
                       ", but got " + std::to_string(x) + " instead.");
  if (x > hi)
    bad_value(key, "integer above maximum value. Expected a value <= " + std::to_string(hi) +
                       ", but got " + std::to_string(x) + " instead.");
  return x;
}

double get_number(const json& o, const std::string& key, double lo, double hi) {
  const json& v = o.at(key);
  if (!v.is_number()) bad_type(key, "a number", v);
  const double x = v.get<double>();
  if (!(x >= lo))
    bad_value(key, "number below minimum value. Expected a value >= " + num(lo) + ", but got " +
                       v.dump() + " instead.");
  if (!(x <= hi))
    bad_value(key, "number above maximum value. Expected a value <= " + num(hi) + ", but got " +
                       v.dump() + " instead.");
  return x;
}

bool get_bool(const json& o, const std::string& key) {
  const json& v = o.at(key);
  if (!v.is_boolean()) bad_type(key, "a boolean", v);
  return v.get<bool>();
}

std::vector<int32_t> token_ids(const json& a, const std::string& key) {
  std::vector<int32_t> out;
  for (const auto& t : a) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 ||
        t.get<int64_t>() > std::numeric_limits<int32_t>::max())
      bad_value(key, "token ids must be non-negative integers.");
    out.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  return out;
}

// prompt: a string, an array of token ids, or a one-element array of either.
void read_prompt(const json& v, CompletionRequest& r) {
  if (v.is_string()) {
    r.prompt_text = v.get<std::string>();
    return;
  }
  if (!v.is_array()) bad_type("prompt", "a string or an array", v);
  if (v.empty()) bad_value("prompt", "must not be empty.");
  if (v[0].is_number()) {
    r.prompt_ids = token_ids(v, "prompt");
    return;
  }
  if (v.size() != 1)
    throw ApiError(400,
                   "Invalid 'prompt': only one prompt per request is supported, got " +
                       std::to_string(v.size()) + ".",
                   "invalid_request_error", "prompt", "unsupported_value");
  if (v[0].is_string())
    r.prompt_text = v[0].get<std::string>();
  else if (v[0].is_array() && !v[0].empty())
    r.prompt_ids = token_ids(v[0], "prompt");
  else
    bad_type("prompt", "a string or an array of token ids", v[0]);
}

void read_messages(const json& v, CompletionRequest& r) {
  if (!v.is_array()) bad_type("messages", "an array", v);
  if (v.empty())
    bad_value(
        "messages",
        "empty array. Expected an array with minimum length 1, but got an empty array instead.");
  static const std::set<std::string> roles = {"system", "developer", "user", "assistant", "tool"};
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string at = "messages[" + std::to_string(i) + "]";
    const json& m = v[i];
    if (!m.is_object()) bad_type(at, "an object", m);
    for (const auto& [k, _] : m.items())
      if (k != "role" && k != "content" && k != "name")
        throw ApiError(400, "Unrecognized request argument supplied: " + at + "." + k,
                       "invalid_request_error", at + "." + k);
    if (!m.contains("role")) bad_value(at + ".role", "required property is missing.");
    if (!m["role"].is_string()) bad_type(at + ".role", "a string", m["role"]);
    ChatMessage msg{m["role"].get<std::string>(), ""};
    if (!roles.count(msg.role))
      bad_value(
          at + ".role",
          "'" + msg.role + "' is not one of 'system', 'developer', 'user', 'assistant', 'tool'.");
    if (!m.contains("content")) bad_value(at + ".content", "required property is missing.");
    const json& c = m["content"];
    if (c.is_string()) {
      msg.content = c.get<std::string>();
    } else if (c.is_array()) {  // content parts: text only
      for (const auto& part : c) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
            !part["text"].is_string())
          bad_value(at + ".content",
                    "only text content parts ({\"type\": \"text\", \"text\": ...}) are supported.");
        msg.content += part["text"].get<std::string>();
      }
    } else {
      bad_type(at + ".content", "a string or an array", c);
    }
    r.messages.push_back(std::move(msg));
  }
}

// Fields OpenAI defines that this server accepts only at their neutral value.
void neutral_only(const json& o, const std::string& key) {
  const json& v = o.at(key);
  const bool neutral = v.is_null() || (v.is_boolean() && !v.get<bool>()) ||
                       (v.is_number() && v.get<double>() == 0) || (v.is_array() && v.empty()) ||
                       (v.is_object() && v.empty()) ||
                       (v.is_string() && v.get<std::string>().empty());
  if (!neutral)
    throw ApiError(400, "'" + key + "' is not supported by this server.", "invalid_request_error",
                   key, "unsupported_parameter");
}

}  // namespace

std::string error_body(const ApiError& e) {
  json err = {{"message", e.what()}, {"type", e.type}, {"param", nullptr}, {"code", nullptr}};
  if (!e.param.empty()) err["param"] = e.param;
  if (!e.code.empty()) err["code"] = e.code;
  return json{{"error", err}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

json parse_json_object(const std::string& body) {
  json o;
  try {
    o = json::parse(body);
  } catch (const json::parse_error& e) {
    throw ApiError(400,
                   std::string("We could not parse the JSON body of your request: ") + e.what(),
                   "invalid_request_error", "", "invalid_json");
  }
  if (!o.is_object())
    throw ApiError(400, std::string("The request body must be a JSON object, got ") + kind(o) + ".",
                   "invalid_request_error", "", "invalid_json");
  return o;
}

CompletionRequest parse_completion_request(const std::string& body, bool chat) {
  const json o = parse_json_object(body);
  CompletionRequest r;
  r.chat = chat;
  static const std::set<std::string> common = {"model",
                                               "max_tokens",
                                               "temperature",
                                               "top_p",
                                               "top_k",
                                               "seed",
                                               "n",
                                               "stream",
                                               "stream_options",
                                               "stop",
                                               "presence_penalty",
                                               "frequency_penalty",
                                               "logit_bias",
                                               "user",
                                               "ignore_eos",
                                               "logprobs",
                                               "priority",
                                               "simple_hint"};
  static const std::set<std::string> completion_only = {"prompt", "echo", "best_of", "suffix"};
  static const std::set<std::string> chat_only = {
      "messages",    "max_completion_tokens", "top_logprobs",       "tools",
      "tool_choice", "response_format",       "parallel_tool_calls"};
  for (const auto& [k, _] : o.items())
    if (!common.count(k) && !(chat ? chat_only : completion_only).count(k))
      throw ApiError(400, "Unrecognized request argument supplied: " + k, "invalid_request_error",
                     k, "unknown_parameter");
  for (const auto& [k, v] : o.items()) {
    if (v.is_null()) continue;  // null means "default" throughout the OpenAI API
    if (k == "model") {
      if (!v.is_string()) bad_type(k, "a string", v);
      r.model = v.get<std::string>();
    } else if (k == "prompt") {
      read_prompt(v, r);
    } else if (k == "messages") {
      read_messages(v, r);
    } else if (k == "max_tokens" || k == "max_completion_tokens") {
      r.max_tokens = static_cast<uint32_t>(get_int(o, k, 1, 1 << 24));
    } else if (k == "temperature") {
      r.temperature = static_cast<float>(get_number(o, k, 0, 2));
    } else if (k == "top_p") {
      r.top_p = static_cast<float>(get_number(o, k, 0, 1));
      if (*r.top_p == 0) bad_value(k, "must be greater than 0, but got 0 instead.");
    } else if (k == "top_k") {
      const int64_t x = get_int(o, k, -1, 1 << 24);
      r.top_k = static_cast<int32_t>(x < 0 ? 0 : x);
    } else if (k == "seed") {
      r.seed = static_cast<uint64_t>(
          get_int(o, k, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
    } else if (k == "n" || k == "best_of") {
      get_int(o, k, 1, 128);
      if (v.get<int64_t>() != 1)
        throw ApiError(400, "Invalid '" + k + "': only 1 is supported, got " + v.dump() + ".",
                       "invalid_request_error", k, "unsupported_value");
    } else if (k == "stream") {
      r.stream = get_bool(o, k);
    } else if (k == "stream_options") {
      if (!v.is_object()) bad_type(k, "an object", v);
      for (const auto& [sk, sv] : v.items()) {
        if (sk != "include_usage")
          throw ApiError(400, "Unrecognized request argument supplied: stream_options." + sk,
                         "invalid_request_error", "stream_options." + sk, "unknown_parameter");
        r.include_usage = get_bool(v, sk);
      }
    } else if (k == "ignore_eos" || k == "echo" || k == "logprobs") {
      if (!v.is_boolean() && !(k == "logprobs" && !chat && v.is_number_integer()))
        bad_type(k, k == "logprobs" && !chat ? "a boolean or an integer" : "a boolean", v);
      if (k == "ignore_eos")
        r.ignore_eos = v.get<bool>();
      else
        neutral_only(o, k);
    } else if (k == "priority") {
      r.priority = static_cast<int32_t>(get_int(o, k, -(1 << 30), 1 << 30));
    } else if (k == "simple_hint") {
      r.simple_hint = get_bool(o, k);
    } else if (k == "user") {
      if (!v.is_string()) bad_type(k, "a string", v);
    } else if (k == "presence_penalty" || k == "frequency_penalty") {
      get_number(o, k, -2, 2);
      neutral_only(o, k);
    } else if (k == "stop") {
      if (!v.is_string() && !v.is_array()) bad_type(k, "a string or an array", v);
      neutral_only(o, k);
    } else {
      neutral_only(o, k);  // logit_bias, suffix, top_logprobs, tools, ...
    }
  }
  if (chat && r.messages.empty()) bad_value("messages", "required property is missing.");
  if (!chat && !r.prompt_text && !r.prompt_ids)
    bad_value("prompt", "required property is missing.");
  return r;
}

}  // namespace sy::server
