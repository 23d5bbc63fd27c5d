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

json usage(uint32_t prompt, uint32_t completion) {
  return json{{"prompt_tokens", prompt},
              {"completion_tokens", completion},
              {"total_tokens", prompt + completion}};
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
    token_lps.push_back(e.logprob);
    json top = json::object();
    for (const auto& a : e.top) top[a.token] = a.logprob;
    top[e.token] = e.logprob;
    tops.push_back(top);
    offsets.push_back(e.text_offset);
  }
  return {{"tokens", tokens},
          {"token_logprobs", token_lps},
          {"top_logprobs", tops},
          {"text_offset", offsets}};
}

json choice(const ResponseMeta& m, const ChoicePart& p, bool chunk) {
  json c = {{"index", p.index}};
  if (m.chat)
    c[chunk ? "delta" : "message"] =
        chunk ? (p.finish_reason && p.text.empty() ? json::object() : json{{"content", p.text}})
              : json{{"role", "assistant"}, {"content", p.text}};
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
                            uint32_t prompt_tokens, uint32_t completion_tokens) {
  json j = head(m, false);
  j["choices"] = json::array();
  for (const auto& c : choices) j["choices"].push_back(choice(m, c, false));
  j["usage"] = usage(prompt_tokens, completion_tokens);
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

std::string usage_event(const ResponseMeta& m, uint32_t prompt_tokens, uint32_t completion_tokens) {
  json j = head(m, true);
  j["choices"] = json::array();
  j["usage"] = usage(prompt_tokens, completion_tokens);
  return event(j);
}

std::string error_event(const std::string& error_body) {
  return "data: " + error_body + "\n\n";
}

}  // namespace sy::server
