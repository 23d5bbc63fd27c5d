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
  return json{{"id", m.id},
              {"object", object},
              {"created", m.created},
              {"model", m.model},
              {"variant", m.variant}};
}

json usage(uint32_t prompt, uint32_t completion) {
  return json{{"prompt_tokens", prompt},
              {"completion_tokens", completion},
              {"total_tokens", prompt + completion}};
}

std::string event(const json& j) {
  return "data: " + dump(j) + "\n\n";
}

json choice(const ResponseMeta& m, const std::string& text, const std::vector<int32_t>* tokens,
            const char* finish, bool chunk) {
  json c = {{"index", 0}};
  if (m.chat)
    c[chunk ? "delta" : "message"] =
        chunk ? json{{"content", text}} : json{{"role", "assistant"}, {"content", text}};
  else
    c["text"] = text;
  c["logprobs"] = nullptr;
  c["finish_reason"] = finish ? json(finish) : json(nullptr);
  if (tokens) c["token_ids"] = *tokens;
  return c;
}

}  // namespace

const char* openai_finish_reason(engine::FinishReason r) {
  switch (r) {
    case engine::FinishReason::stop:
      return "stop";
    case engine::FinishReason::aborted:
      return "abort";
    default:
      return "length";
  }
}

std::string completion_body(const ResponseMeta& m, const std::string& text,
                            const std::vector<int32_t>& tokens, engine::FinishReason reason,
                            uint32_t prompt_tokens) {
  json j = head(m, false);
  j["choices"] = json::array({choice(m, text, &tokens, openai_finish_reason(reason), false)});
  j["usage"] = usage(prompt_tokens, static_cast<uint32_t>(tokens.size()));
  return dump(j);
}

std::string role_event(const ResponseMeta& m) {
  json j = head(m, true);
  j["choices"] = json::array({{{"index", 0},
                               {"delta", {{"role", "assistant"}, {"content", ""}}},
                               {"logprobs", nullptr},
                               {"finish_reason", nullptr}}});
  return event(j);
}

std::string token_event(const ResponseMeta& m, const std::string& text,
                        const std::vector<int32_t>& tokens) {
  json j = head(m, true);
  j["choices"] = json::array({choice(m, text, &tokens, nullptr, true)});
  return event(j);
}

std::string finish_event(const ResponseMeta& m, const std::string& text,
                         engine::FinishReason reason) {
  json j = head(m, true);
  json c = choice(m, text, nullptr, openai_finish_reason(reason), true);
  if (m.chat && text.empty()) c["delta"] = json::object();
  j["choices"] = json::array({c});
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
