// Parses and checks the body of /v1/completions and /v1/chat/completions. Every refusal is an
// ApiError(400) naming the field, in OpenAI's wording; unknown fields are refused as OpenAI does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sy::server {

struct ChatMessage {
  std::string role, content;
};

struct CompletionRequest {
  bool chat = false;
  std::string model;                               // "" when absent
  std::optional<std::string> prompt_text;          // completions: text
  std::optional<std::vector<int32_t>> prompt_ids;  // completions: token ids
  std::vector<ChatMessage> messages;               // chat
  std::optional<uint32_t> max_tokens;
  std::optional<float> temperature, top_p;
  std::optional<int32_t> top_k;  // extension (vLLM): -1 or 0 = no limit
  std::optional<uint64_t> seed;
  bool stream = false;
  bool include_usage = false;       // stream_options.include_usage
  bool ignore_eos = false;          // extension (vLLM): generate max_tokens tokens
  std::optional<int32_t> priority;  // extension (vLLM): larger runs first
  bool simple_hint = false;  // extension: the client says the request is simple (triage input)
};

// Throws ApiError.
CompletionRequest parse_completion_request(const std::string& body, bool chat);

// The request body as a JSON object; ApiError(400, code invalid_json) when it is not one.
nlohmann::json parse_json_object(const std::string& body);

}  // namespace sy::server
