// Response bodies of /v1/completions and /v1/chat/completions, whole and streamed (one
// server-sent event per chunk), with n choices and optional logprobs. Each choice carries, as an
// extension, the token ids it holds, and each body names the variant that served it, so clients
// can compare tokens exactly.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/request.h"
#include "server/chat_output.h"

namespace sy::server {

struct ResponseMeta {
  bool chat = false;
  std::string id;                  // cmpl-... / chatcmpl-...
  int64_t created = 0;             // unix seconds
  std::string model;               // what the client asked for, or the served model name
  std::string variant;             // extension: which variant produced the tokens
  std::string system_fingerprint;  // changes whenever the variant's configuration does
  bool logprobs = false;           // the request asked for them
};

// One token's logprob as the response shows it: its text ("bytes:\\xNN" when it is not valid
// UTF-8 alone), its raw bytes, and the same of the alternatives.
struct LogprobEntry {
  struct Alt {
    std::string token, bytes;
    float logprob = 0;
  };
  std::string token, bytes;
  float logprob = 0;
  std::vector<Alt> top;
  size_t text_offset = 0;  // completions: where the token starts in the choice's text
  bool first = false;      // the prompt's first token (echo): no logprob, shown as null
};

// A whole choice, or one streamed chunk of it.
struct ChoicePart {
  uint32_t index = 0;
  std::string text;                  // chat: the content
  std::string reasoning;             // chat: reasoning_content
  std::vector<ToolCall> tool_calls;  // chat
  std::vector<int32_t> tokens;
  std::vector<LogprobEntry> logprobs;
  const char* finish_reason = nullptr;  // set on the last part of a choice
};

// OpenAI's finish_reason: stop (EOS, a stop string or stop token) or length (max_tokens or a
// full context). An aborted request gets an error instead, never a finish_reason.
const char* openai_finish_reason(engine::FinishReason r);

// The token counts of an answer. cached: prompt tokens the prefix cache held
// (usage.prompt_tokens_details.cached_tokens, as OpenAI and vLLM report it).
struct Usage {
  uint32_t prompt = 0, completion = 0, cached = 0;
};

std::string completion_body(const ResponseMeta& m, const std::vector<ChoicePart>& choices,
                            const Usage& usage);
// `data: {...}\n\n` events. Each chat choice's first chunk carries the assistant role.
std::string role_event(const ResponseMeta& m, uint32_t index);
std::string chunk_event(const ResponseMeta& m, const ChoicePart& part);
std::string usage_event(const ResponseMeta& m, const Usage& usage);
std::string error_event(const std::string& error_body);
inline const char* done_event() {
  return "data: [DONE]\n\n";
}

}  // namespace sy::server
