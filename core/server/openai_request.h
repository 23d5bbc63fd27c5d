// Parses and checks the body of /v1/completions and /v1/chat/completions. Every refusal is an
// ApiError(400) naming the field, in OpenAI's wording; unknown fields are refused as OpenAI does.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "grammar/grammar.h"
#include "server/json_body.h"

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
  // chat: what the template sees, in the client's key order: the messages (tool_calls'
  // arguments as objects, text parts joined), the tools offered (null: none), and its kwargs
  // (chat_template_kwargs, with reasoning_effort).
  nlohmann::ordered_json template_messages, tools, template_kwargs;
  // "auto", "none" (the model may not call a tool), "required" (it must call one) or
  // "function" (it must call tool_name); the last two constrain the output to the call syntax.
  std::string tool_choice = "auto";
  std::string tool_name;
  bool parallel_tool_calls = true;
  // The output's grammar: llama-server's `grammar` (GBNF) or response_format json_object /
  // json_schema, compiled; null: free text (tool_choice's grammar comes with the prompt).
  std::shared_ptr<const grammar::Grammar> grammar;
  bool add_generation_prompt = true;  // extension (vLLM): end with an open assistant turn
  std::optional<uint32_t> max_tokens;              // max_completion_tokens wins over max_tokens
  std::string max_tokens_param;                    // the field it came from, for messages
  std::optional<float> temperature, top_p;
  std::optional<int32_t> top_k;  // extension (vLLM): -1 or 0 = no limit
  // extensions (vLLM, llama-server): min_p in [0, 1], typical_p in (0, 1], repetition_penalty
  // in (0, 2] (text/sampler.h)
  std::optional<float> min_p, typical_p, repetition_penalty;
  std::optional<uint64_t> seed;
  uint32_t n = 1;  // choices, each its own engine request (seed + index)
  bool stream = false;
  bool include_usage = false;       // stream_options.include_usage
  bool ignore_eos = false;          // extension (vLLM): generate max_tokens tokens
  std::optional<int32_t> priority;  // extension (vLLM): larger runs first
  bool simple_hint = false;  // extension: the client says the request is simple (triage input)
  std::vector<std::string> stop;        // up to 4 strings; the text ends before the first match
  std::vector<int32_t> stop_token_ids;  // extension (vLLM): these tokens end the choice
  int32_t logprobs = -1;  // -1: none; else alternatives per token (chat: top_logprobs)
  bool echo = false;      // completions: the prompt text precedes the completion
  float presence_penalty = 0, frequency_penalty = 0;
  std::vector<std::pair<int32_t, float>> logit_bias;  // token id -> bias in [-100, 100]
};

// Throws ApiError.
CompletionRequest parse_completion_request(const std::string& body, bool chat,
                                           const JsonLimits& limits = {});

// The request body as a JSON object, parsed within `limits` (server/json_body.h);
// ApiError(400, code invalid_json) when it is not one.
nlohmann::json parse_json_object(const std::string& body, const JsonLimits& limits);

}  // namespace sy::server
