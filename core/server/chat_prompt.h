// The prompt of a chat request: the variant's chat template (text/chat_template.h) writes the
// messages out, and control tokens are parsed in the template's own markup only, never in what
// the messages say.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/variant.h"
#include "server/openai_request.h"

namespace sy::server {

// add_bos: prepend BOS (a chat request does as the vocabulary says). Throws ApiError(400, code
// unsupported_chat_template) when the model's template is not one the chat formatter
// recognises (the message names it).
std::vector<int32_t> chat_prompt_ids(const engine::Variant& variant, const text::Tokenizer& tok,
                                     const std::vector<ChatMessage>& messages, bool add_bos,
                                     bool add_generation_prompt = true);

}  // namespace sy::server
