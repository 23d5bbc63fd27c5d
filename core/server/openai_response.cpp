#include "server/openai_response.h"

#include <nlohmann/json.hpp>

namespace sy::server {
namespace {

using nlohmann::json;

// Random-weight models emit arbitrary bytes: invalid UTF-8 becomes U+FFFD rather than an error.
std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json head(const ResponseMeta& m, bool chunk) {
  const char* object =
      m.chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
  json j = {{"id", m.id},
            {"object", object},
            {"created", m.created},
            {"model", m.model},
            {"variant", m.variant}};
  if (!m.system_fingerprint.empty()) j["system_fingerprint"] = m.system_fingerprint;
  return j;
}

json usage_json(const Usage& u) {
  return json{{"prompt_tokens", u.prompt},
              {"completion_tokens", u.completion},
              {"total_tokens", u.prompt + u.completion},
              {"prompt_tokens_details", {{"cached_tokens", u.cached}}}};
}

std::string event(const json& j) {
  return "data: " + dump(j) + "\n\n";
}

json bytes_of(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(c);
  return b;
}

// Chat: {"content": [{token, logprob, bytes, top_logprobs}], "refusal": null}. Completions:
// tokens, token_logprobs, top_logprobs (the alternatives and the sampled token), text_offset.
json logprobs_json(const ResponseMeta& m, const std::vector<LogprobEntry>& lps) {
  if (m.chat) {
    json content = json::array();
    for (const auto& e : lps) {
      json top = json::array();
      for (const auto& a : e.top)
        top.push_back({{"token", a.token}, {"logprob", a.logprob}, {"bytes", bytes_of(a.bytes)}});
      content.push_back({{"token", e.token},
                         {"logprob", e.logprob},
                         {"bytes", bytes_of(e.bytes)},
                         {"top_logprobs", top}});
    }
    return {{"content", content}, {"refusal", nullptr}};
  }
  json tokens = json::array(), token_lps = json::array(), tops = json::array(),
       offsets = json::array();
  for (const auto& e : lps) {
    tokens.push_back(e.token);
    offsets.push_back(e.text_offset);
    if (e.first) {
      token_lps.push_back(nullptr);
      tops.push_back(nullptr);
      continue;
    }
    token_lps.push_back(e.logprob);
    json top = json::object();
    for (const auto& a : e.top) top[a.token] = a.logprob;
    top[e.token] = e.logprob;
    tops.push_back(top);
  }
  return {{"tokens", tokens},
          {"token_logprobs", token_lps},
          {"top_logprobs", tops},
          {"text_offset", offsets}};
}

// OpenAI's tool_calls; a chunk's entries carry their index, and a call's first one its id, type
// and name, later ones only more of its arguments.
json tool_calls_json(const std::vector<ToolCall>& calls, bool chunk) {
  json out = json::array();
  for (const ToolCall& t : calls) {
    json c = t.id.empty() ? json{{"function", {{"arguments", t.arguments}}}}
                          : json{{"id", t.id},
                                 {"type", "function"},
                                 {"function", {{"name", t.name}, {"arguments", t.arguments}}}};
    if (chunk) c["index"] = t.index;
    out.push_back(std::move(c));
  }
  return out;
}

// A chat message or delta: the content (null in a message that only calls tools), the
// reasoning_content and tool_calls when the answer has them.
json chat_message(const ChoicePart& p, bool chunk) {
  json m = chunk ? json::object() : json{{"role", "assistant"}};
  if (!chunk)
    m["content"] = p.text.empty() && !p.tool_calls.empty() ? json(nullptr) : json(p.text);
  else if (!p.text.empty() || (!p.finish_reason && p.reasoning.empty() && p.tool_calls.empty()))
    m["content"] = p.text;
  if (!p.reasoning.empty()) m["reasoning_content"] = p.reasoning;
  if (!p.tool_calls.empty()) m["tool_calls"] = tool_calls_json(p.tool_calls, chunk);
  return m;
}

json choice(const ResponseMeta& m, const ChoicePart& p, bool chunk) {
  json c = {{"index", p.index}};
  if (m.chat)
    c[chunk ? "delta" : "message"] = chat_message(p, chunk);
  else
    c["text"] = p.text;
  c["logprobs"] =
      m.logprobs && !(chunk && p.logprobs.empty()) ? logprobs_json(m, p.logprobs) : json(nullptr);
  c["finish_reason"] = p.finish_reason ? json(p.finish_reason) : json(nullptr);
  if (!chunk || !p.finish_reason || !p.tokens.empty()) c["token_ids"] = p.tokens;
  return c;
}

}  // namespace

const char* openai_finish_reason(engine::FinishReason r) {
  return r == engine::FinishReason::stop ? "stop" : "length";
}

std::string completion_body(const ResponseMeta& m, const std::vector<ChoicePart>& choices,
                            const Usage& usage) {
  json j = head(m, false);
  j["choices"] = json::array();
  for (const auto& c : choices) j["choices"].push_back(choice(m, c, false));
  j["usage"] = usage_json(usage);
  return dump(j);
}

std::string role_event(const ResponseMeta& m, uint32_t index) {
  json j = head(m, true);
  j["choices"] = json::array({{{"index", index},
                               {"delta", {{"role", "assistant"}, {"content", ""}}},
                               {"logprobs", nullptr},
                               {"finish_reason", nullptr}}});
  return event(j);
}

std::string chunk_event(const ResponseMeta& m, const ChoicePart& part) {
  json j = head(m, true);
  j["choices"] = json::array({choice(m, part, true)});
  return event(j);
}

std::string usage_event(const ResponseMeta& m, const Usage& usage) {
  json j = head(m, true);
  j["choices"] = json::array();
  j["usage"] = usage_json(usage);
  return event(j);
}

std::string error_event(const std::string& error_body) {
  return "data: " + error_body + "\n\n";
}

}  // namespace sy::server
