// Response bodies of /v1/completions and /v1/chat/completions, whole and streamed (one
// server-sent event per chunk). Each choice carries, as an extension, the token ids it holds,
// and each body names the variant that served it, so clients can compare tokens exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/request.h"

namespace sy::server {

struct ResponseMeta {
  bool chat = false;
  std::string id;       // cmpl-... / chatcmpl-...
  int64_t created = 0;  // unix seconds
  std::string model;    // what the client asked for, or the served model name
  std::string variant;  // extension: which variant produced the tokens
};

// OpenAI's finish_reason: stop, length (also a full context), or abort (vLLM's name).
const char* openai_finish_reason(engine::FinishReason r);

std::string completion_body(const ResponseMeta& m, const std::string& text,
                            const std::vector<int32_t>& tokens, engine::FinishReason reason,
                            uint32_t prompt_tokens);
// `data: {...}\n\n` events. The first chat chunk carries the assistant role.
std::string role_event(const ResponseMeta& m);
std::string token_event(const ResponseMeta& m, const std::string& text,
                        const std::vector<int32_t>& tokens);
std::string finish_event(const ResponseMeta& m, const std::string& text,
                         engine::FinishReason reason);
std::string usage_event(const ResponseMeta& m, uint32_t prompt_tokens, uint32_t completion_tokens);
std::string error_event(const std::string& error_body);
inline const char* done_event() {
  return "data: [DONE]\n\n";
}

}  // namespace sy::server
