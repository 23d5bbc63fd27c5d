#include "server/openai_request.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "server/api_error.h"
#include "server/output_grammar.h"

namespace sy::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

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
    invalid_value(key, "integer above maximum value. Expected a value <= " + std::to_string(hi) +
                           ", but got " + v.dump() + " instead.");
  const int64_t x = v.get<int64_t>();
  if (x < lo)
    invalid_value(key, "integer below minimum value. Expected a value >= " + std::to_string(lo) +
                           ", but got " + std::to_string(x) + " instead.");
  if (x > hi)
    invalid_value(key, "integer above maximum value. Expected a value <= " + std::to_string(hi) +
                           ", but got " + std::to_string(x) + " instead.");
  return x;
}

// `name`: the field as messages name it (default: key).
double get_number(const json& o, const std::string& key, double lo, double hi,
                  const std::string& name = "") {
  const std::string& n = name.empty() ? key : name;
  const json& v = o.at(key);
  if (!v.is_number()) bad_type(n, "a number", v);
  const double x = v.get<double>();
  if (!(x >= lo))
    invalid_value(n, "number below minimum value. Expected a value >= " + num(lo) + ", but got " +
                         v.dump() + " instead.");
  if (!(x <= hi))
    invalid_value(n, "number above maximum value. Expected a value <= " + num(hi) + ", but got " +
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
      invalid_value(key, "token ids must be non-negative integers.");
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
  if (v.empty()) invalid_value("prompt", "must not be empty.");
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

// A message's content: a string, text parts (joined), or null where the role allows it.
std::string read_content(const json& m, const std::string& at, bool optional) {
  if (!m.contains("content") || m["content"].is_null()) {
    if (!optional) invalid_value(at + ".content", "required property is missing.");
    return "";
  }
  const json& c = m["content"];
  if (c.is_string()) return c.get<std::string>();
  if (!c.is_array()) bad_type(at + ".content", "a string or an array", c);
  std::string out;
  for (const auto& part : c) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
        !part["text"].is_string())
      invalid_value(at + ".content",
                    "only text content parts ({\"type\": \"text\", \"text\": ...}) are supported.");
    out += part["text"].get<std::string>();
  }
  return out;
}

// An assistant's tool_calls, as OpenAI sends them: [{id, type: "function", function: {name,
// arguments: "<JSON>"}}]. The template gets the arguments as an object (templates expect one,
// as vLLM and llama.cpp pass them) when they parse as one.
ordered_json read_tool_calls(const json& plain, const ordered_json& v, const std::string& at) {
  if (!v.is_array()) bad_type(at, "an array", plain);
  ordered_json out = ordered_json::array();
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string ai = at + "[" + std::to_string(i) + "]";
    ordered_json c = v[i];
    if (!c.is_object() || !c.contains("function") || !c["function"].is_object())
      invalid_value(ai + ".function", "required property is missing.");
    ordered_json& f = c["function"];
    if (!f.contains("name") || !f["name"].is_string())
      invalid_value(ai + ".function.name", "required property is missing.");
    if (f.contains("arguments") && f["arguments"].is_string()) {
      // The template sees the object (as vLLM and llama.cpp give it); text that is none is
      // refused as they refuse it, rather than rendered as a string.
      const std::string text = f["arguments"].get<std::string>();
      ordered_json a = ordered_json::parse(text, nullptr, false);
      if (!a.is_object())
        invalid_value(
            ai + ".function.arguments",
            "expected a JSON object encoded as a string, got '" + text.substr(0, 64) + "'.");
      f["arguments"] = std::move(a);
    }
    out.push_back(std::move(c));
  }
  return out;
}

void read_messages(const json& v, const ordered_json& ordered, CompletionRequest& r) {
  if (!v.is_array()) bad_type("messages", "an array", v);
  if (v.empty())
    invalid_value(
        "messages",
        "empty array. Expected an array with minimum length 1, but got an empty array instead.");
  static const std::set<std::string> roles = {"system", "developer", "user", "assistant", "tool"};
  static const std::set<std::string> keys = {
      "role", "content", "name", "tool_calls", "tool_call_id", "reasoning_content", "reasoning"};
  r.template_messages = ordered_json::array();
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string at = "messages[" + std::to_string(i) + "]";
    const json& m = v[i];
    if (!m.is_object()) bad_type(at, "an object", m);
    for (const auto& [k, _] : m.items())
      if (!keys.count(k))
        throw ApiError(400, "Unrecognized request argument supplied: " + at + "." + k,
                       "invalid_request_error", at + "." + k);
    if (!m.contains("role")) invalid_value(at + ".role", "required property is missing.");
    if (!m["role"].is_string()) bad_type(at + ".role", "a string", m["role"]);
    ChatMessage msg{m["role"].get<std::string>(), ""};
    if (!roles.count(msg.role))
      invalid_value(
          at + ".role",
          "'" + msg.role + "' is not one of 'system', 'developer', 'user', 'assistant', 'tool'.");
    const bool calls =
        msg.role == "assistant" && m.contains("tool_calls") && !m["tool_calls"].is_null();
    if (m.contains("tool_calls") && !m["tool_calls"].is_null() && msg.role != "assistant")
      invalid_value(at + ".tool_calls", "only assistant messages carry tool calls.");
    msg.content = read_content(m, at, calls);
    for (const char* k : {"name", "tool_call_id", "reasoning_content", "reasoning"})
      if (m.contains(k) && !m[k].is_null() && !m[k].is_string())
        bad_type(at + "." + k, "a string", m[k]);
    // The template's copy: the client's keys in its order, content as text.
    ordered_json t = ordered[i];
    t["content"] = calls && (!m.contains("content") || m["content"].is_null())
                       ? ordered_json(nullptr)
                       : ordered_json(msg.content);
    if (calls)
      t["tool_calls"] =
          read_tool_calls(m["tool_calls"], ordered[i]["tool_calls"], at + ".tool_calls");
    if (t.contains("reasoning") && !t.contains("reasoning_content"))
      t["reasoning_content"] = t["reasoning"];  // vLLM's newer name
    r.template_messages.push_back(std::move(t));
    r.messages.push_back(std::move(msg));
  }
}

// tools: [{type: "function", function: {name, description, parameters}}].
void read_tools(const json& v, const ordered_json& ordered, CompletionRequest& r) {
  if (!v.is_array()) bad_type("tools", "an array", v);
  if (v.size() > 128)
    invalid_value("tools", "at most 128 tools, got " + std::to_string(v.size()) + ".");
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string at = "tools[" + std::to_string(i) + "]";
    const json& t = v[i];
    if (!t.is_object()) bad_type(at, "an object", t);
    if (t.value("type", "") != "function")
      invalid_value(at + ".type", "only 'function' tools are supported.");
    if (!t.contains("function") || !t["function"].is_object())
      invalid_value(at + ".function", "required property is missing.");
    if (!t["function"].contains("name") || !t["function"]["name"].is_string())
      invalid_value(at + ".function.name", "required property is missing.");
  }
  if (!v.empty()) r.tools = ordered;
}

[[noreturn]] void unsupported(const std::string& key, const std::string& why = ".") {
  throw ApiError(400, "'" + key + "' is not supported by this server" + why,
                 "invalid_request_error", key, "unsupported_parameter");
}

// Fields OpenAI defines that this server accepts only at their neutral value.
void neutral_only(const json& o, const std::string& key) {
  const json& v = o.at(key);
  const bool neutral = v.is_null() || (v.is_boolean() && !v.get<bool>()) ||
                       (v.is_number() && v.get<double>() == 0) || (v.is_array() && v.empty()) ||
                       (v.is_object() && v.empty()) ||
                       (v.is_string() && v.get<std::string>().empty());
  if (!neutral) unsupported(key);
}

std::vector<std::string> read_stop(const json& v) {
  std::vector<std::string> out;
  if (v.is_string()) {
    out.push_back(v.get<std::string>());
  } else if (v.is_array()) {
    if (v.size() > 4)
      invalid_value("stop",
                    "array too long. Expected an array with maximum length 4, but got an "
                    "array with length " +
                        std::to_string(v.size()) + " instead.");
    for (const auto& s : v) {
      if (!s.is_string()) bad_type("stop", "a string or an array of strings", s);
      out.push_back(s.get<std::string>());
    }
  } else {
    bad_type("stop", "a string or an array", v);
  }
  for (const auto& s : out) {
    if (s.empty()) invalid_value("stop", "stop strings must not be empty.");
    if (s.size() > 256) invalid_value("stop", "stop strings are limited to 256 bytes.");
  }
  return out;
}

std::vector<std::pair<int32_t, float>> read_logit_bias(const json& v) {
  if (!v.is_object()) bad_type("logit_bias", "an object", v);
  if (v.size() > 1024)
    invalid_value("logit_bias", "at most 1024 token ids, got " + std::to_string(v.size()) + ".");
  std::vector<std::pair<int32_t, float>> out;
  for (const auto& [k, b] : v.items()) {
    const std::string key = "logit_bias." + k.substr(0, 32);
    int64_t id = -1;
    if (!k.empty() && k.size() <= 10 && k.find_first_not_of("0123456789") == std::string::npos)
      id = std::stoll(k);
    if (id < 0 || id > std::numeric_limits<int32_t>::max())
      invalid_value("logit_bias",
                    "keys must be token ids (non-negative integers as strings), got '" +
                        k.substr(0, 32) + "'.");
    out.emplace_back(static_cast<int32_t>(id),
                     static_cast<float>(get_number(v, k, -100, 100, key)));
  }
  return out;
}

// "none", "auto", "required", or {"type": "function", "function": {"name": ...}}.
void read_tool_choice(const json& v, CompletionRequest& r) {
  if (v.is_string()) {
    const std::string c = v.get<std::string>();
    if (c != "none" && c != "auto" && c != "required")
      invalid_value("tool_choice", "expected 'none', 'auto', 'required' or a function, got '" +
                                       c.substr(0, 64) + "'.");
    r.tool_choice = c;
    return;
  }
  if (!v.is_object()) bad_type("tool_choice", "a string or an object", v);
  if (v.value("type", "") != "function")
    invalid_value("tool_choice.type", "only 'function' is supported.");
  if (!v.contains("function") || !v["function"].is_object() || !v["function"].contains("name") ||
      !v["function"]["name"].is_string())
    invalid_value("tool_choice.function.name", "required property is missing.");
  r.tool_choice = "function";
  r.tool_name = v["function"]["name"].get<std::string>();
}

}  // namespace

std::string error_body(const ApiError& e) {
  json err = {{"message", e.what()}, {"type", e.type}, {"param", nullptr}, {"code", nullptr}};
  if (!e.param.empty()) err["param"] = e.param;
  if (!e.code.empty()) err["code"] = e.code;
  return json{{"error", err}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

json parse_json_object(const std::string& body, const JsonLimits& limits) {
  const json o = parse_json_body(body, limits);
  if (!o.is_object())
    throw ApiError(400, std::string("The request body must be a JSON object, got ") + kind(o) + ".",
                   "invalid_request_error", "", "invalid_json");
  return o;
}

CompletionRequest parse_completion_request(const std::string& body, bool chat,
                                           const JsonLimits& limits) {
  const json o = parse_json_object(body, limits);
  // Again in the client's key order (the limits held for the first parse): the template writes
  // tools and arguments with tojson, key by key as sent, and a schema's properties come out in
  // the order given.
  const ordered_json ordered = ordered_json::parse(body);
  CompletionRequest r;
  r.chat = chat;
  r.template_kwargs = ordered_json::object();
  // What each endpoint accepts; anything else is refused by name. The comments say how the
  // fields OpenAI defines are treated when they are not honoured in full.
  static const std::set<std::string> common = {"model",
                                               "max_tokens",
                                               "temperature",
                                               "top_p",
                                               "top_k",
                                               "min_p",
                                               "typical_p",
                                               "repetition_penalty",
                                               "seed",
                                               "n",
                                               "stream",
                                               "stream_options",
                                               "stop",
                                               "stop_token_ids",
                                               "presence_penalty",
                                               "frequency_penalty",
                                               "logit_bias",
                                               "user",
                                               "ignore_eos",
                                               "logprobs",
                                               "priority",
                                               "simple_hint",
                                               "response_format",
                                               "grammar"};
  static const std::set<std::string> completion_only = {"prompt", "echo", "best_of", "suffix"};
  static const std::set<std::string> chat_only = {
      "messages", "max_completion_tokens", "top_logprobs", "tools", "tool_choice",
      "parallel_tool_calls", "chat_template_kwargs", "reasoning_effort", "add_generation_prompt",
      // accepted only at their neutral value (nothing stored, no other modality):
      "functions", "function_call", "store", "metadata", "modalities", "audio", "prediction",
      "service_tier", "web_search_options", "verbosity", "prompt_cache_key", "safety_identifier"};
  for (const auto& [k, _] : o.items())
    if (!common.count(k) && !(chat ? chat_only : completion_only).count(k))
      throw ApiError(400, "Unrecognized request argument supplied: " + k.substr(0, 64),
                     "invalid_request_error", k.substr(0, 64), "unknown_parameter");
  bool chat_logprobs = false;
  std::optional<int64_t> top_logprobs, best_of;
  std::string gbnf, format_gbnf;  // the grammar field, response_format's
  for (const auto& [k, v] : o.items()) {
    if (v.is_null()) continue;  // null means "default" throughout the OpenAI API
    if (k == "model") {
      if (!v.is_string()) bad_type(k, "a string", v);
      r.model = v.get<std::string>();
    } else if (k == "prompt") {
      read_prompt(v, r);
    } else if (k == "messages") {
      read_messages(v, ordered["messages"], r);
    } else if (k == "tools") {
      read_tools(v, ordered["tools"], r);
    } else if (k == "chat_template_kwargs") {
      if (!v.is_object()) bad_type(k, "an object", v);
      for (const auto& [kk, kv] : ordered[k].items()) r.template_kwargs[kk] = kv;
    } else if (k == "add_generation_prompt") {
      r.add_generation_prompt = get_bool(o, k);
    } else if (k == "reasoning_effort") {
      if (!v.is_string()) bad_type(k, "a string", v);
      r.template_kwargs[k] = v;
    } else if (k == "max_tokens" || k == "max_completion_tokens") {
      // 0 (completions with echo: score the prompt) is checked below
      const auto n = static_cast<uint32_t>(get_int(o, k, chat ? 1 : 0, 1 << 24));
      if (k == "max_completion_tokens" || r.max_tokens_param != "max_completion_tokens") {
        r.max_tokens = n;  // the newer name wins when both are sent
        r.max_tokens_param = k;
      }
    } else if (k == "temperature") {
      r.temperature = static_cast<float>(get_number(o, k, 0, 2));
    } else if (k == "top_p") {
      r.top_p = static_cast<float>(get_number(o, k, 0, 1));
      if (*r.top_p == 0) invalid_value(k, "must be greater than 0, but got 0 instead.");
    } else if (k == "min_p") {
      r.min_p = static_cast<float>(get_number(o, k, 0, 1));
    } else if (k == "typical_p") {
      r.typical_p = static_cast<float>(get_number(o, k, 0, 1));
      if (*r.typical_p == 0) invalid_value(k, "must be greater than 0, but got 0 instead.");
    } else if (k == "repetition_penalty") {
      r.repetition_penalty = static_cast<float>(get_number(o, k, 0, 2));
      if (*r.repetition_penalty == 0)
        invalid_value(k, "must be greater than 0, but got 0 instead.");
    } else if (k == "top_k") {
      const int64_t x = get_int(o, k, -1, 1 << 24);
      r.top_k = static_cast<int32_t>(x < 0 ? 0 : x);
    } else if (k == "seed") {
      r.seed = static_cast<uint64_t>(
          get_int(o, k, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
    } else if (k == "n") {
      r.n = static_cast<uint32_t>(get_int(o, k, 1, 128));
    } else if (k == "best_of") {
      best_of = get_int(o, k, 1, 128);
    } else if (k == "stream") {
      r.stream = get_bool(o, k);
    } else if (k == "stream_options") {
      if (!v.is_object()) bad_type(k, "an object", v);
      for (const auto& [sk, sv] : v.items()) {
        if (sk != "include_usage")
          throw ApiError(
              400, "Unrecognized request argument supplied: stream_options." + sk.substr(0, 64),
              "invalid_request_error", "stream_options." + sk.substr(0, 64), "unknown_parameter");
        if (!sv.is_null()) r.include_usage = get_bool(v, sk);
      }
    } else if (k == "ignore_eos") {
      r.ignore_eos = get_bool(o, k);
    } else if (k == "echo") {
      r.echo = get_bool(o, k);
    } else if (k == "logprobs") {
      if (chat) {
        chat_logprobs = get_bool(o, k);
      } else {
        if (v.is_boolean()) bad_type(k, "an integer", v);
        r.logprobs = static_cast<int32_t>(get_int(o, k, 0, 20));
      }
    } else if (k == "top_logprobs") {
      top_logprobs = get_int(o, k, 0, 20);
    } else if (k == "priority") {
      r.priority = static_cast<int32_t>(get_int(o, k, -(1 << 30), 1 << 30));
    } else if (k == "simple_hint") {
      r.simple_hint = get_bool(o, k);
    } else if (k == "user" || k == "safety_identifier") {
      // An end-user identifier for the operator's abuse tracking; it changes no output.
      if (!v.is_string()) bad_type(k, "a string", v);
    } else if (k == "presence_penalty") {
      r.presence_penalty = static_cast<float>(get_number(o, k, -2, 2));
    } else if (k == "frequency_penalty") {
      r.frequency_penalty = static_cast<float>(get_number(o, k, -2, 2));
    } else if (k == "logit_bias") {
      r.logit_bias = read_logit_bias(v);
    } else if (k == "stop") {
      r.stop = read_stop(v);
    } else if (k == "stop_token_ids") {
      if (!v.is_array()) bad_type(k, "an array", v);
      if (v.size() > 1024) invalid_value(k, "at most 1024 token ids.");
      r.stop_token_ids = token_ids(v, k);
    } else if (k == "response_format") {
      format_gbnf = response_format_gbnf(ordered[k]);
    } else if (k == "grammar") {
      if (!v.is_string()) bad_type(k, "a string", v);
      gbnf = v.get<std::string>();
    } else if (k == "tool_choice") {
      read_tool_choice(v, r);
    } else if (k == "parallel_tool_calls") {
      if (!v.is_boolean()) bad_type(k, "a boolean", v);
      r.parallel_tool_calls = v.get<bool>();
    } else if (k == "service_tier") {
      if (!(v.is_string() && (v.get<std::string>() == "auto" || v.get<std::string>() == "default")))
        unsupported(k, ": only 'auto' and 'default' are.");
    } else {
      neutral_only(o, k);  // suffix, tools, functions, store, metadata, audio, ...
    }
  }
  if (chat) {
    if (top_logprobs && !chat_logprobs)
      invalid_value("top_logprobs", "'logprobs' must be true when 'top_logprobs' is set.");
    if (chat_logprobs) r.logprobs = static_cast<int32_t>(top_logprobs.value_or(0));
  }
  if (best_of && *best_of != r.n)
    throw ApiError(400,
                   "Invalid 'best_of': only best_of equal to n (" + std::to_string(r.n) +
                       ") is supported, got " + std::to_string(*best_of) + ".",
                   "invalid_request_error", "best_of", "unsupported_value");
  if (r.max_tokens && *r.max_tokens == 0 && !r.echo)
    invalid_value(r.max_tokens_param,
                  "0 is only allowed with 'echo' (the prompt scored, nothing generated).");
  if (!gbnf.empty() && !format_gbnf.empty())
    invalid_value("grammar", "give either 'grammar' or a JSON 'response_format', not both.");
  if (!gbnf.empty()) r.grammar = compile_gbnf(gbnf, "grammar");
  if (!format_gbnf.empty()) r.grammar = compile_gbnf(format_gbnf, "response_format");
  if (r.tool_choice == "required" || r.tool_choice == "function") {
    if (r.tools.is_null())
      invalid_value("tool_choice", "'required' or a named function needs 'tools'.");
    if (r.grammar)
      invalid_value("tool_choice",
                    "'required' or a named function cannot be combined with 'grammar' "
                    "or a JSON 'response_format'.");
  }
  if (chat && r.messages.empty()) invalid_value("messages", "required property is missing.");
  if (!chat && !r.prompt_text && !r.prompt_ids)
    invalid_value("prompt", "required property is missing.");
  return r;
}

}  // namespace sy::server
