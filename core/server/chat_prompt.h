// The prompt of a chat request: the variant's chat template (text/chat_template.h) writes the
// conversation out, and control tokens are parsed in the template's own markup only, never in
// what the messages say.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/variant.h"
#include "server/chat_output.h"
#include "server/openai_request.h"

namespace sy::server {

// The conversation rendered by the variant's template, with the vocabulary's special-token
// strings. Throws ApiError(400): code unsupported_chat_template when the model's template is
// neither Jinja the engine parses nor a family the chat formatter recognises, code
// chat_template_error when the template fails on this conversation (the message names the
// template line: raise_exception's text, an undefined value).
text::RenderedChat render_conversation(const engine::Variant& variant, const text::Tokenizer& tok,
                                       text::Conversation c);

// The request's messages, tools and template kwargs through the variant's template.
text::RenderedChat render_request(const engine::Variant& variant, const text::Tokenizer& tok,
                                  const CompletionRequest& cr);

struct ChatPrompt {
  std::vector<int32_t> ids;
  OutputSyntax syntax;  // how to read what the model answers
  // tool_choice "required" or a named function: the calls the output must be; else null.
  std::shared_ptr<const grammar::Grammar> grammar;
};

// The request's prompt (render_request) as token ids. add_bos: prepend BOS (a chat request does as
// the vocabulary says); a template that writes the BOS string itself first (Llama 3's) then has it
// removed, as llama.cpp does, so the prompt holds one BOS. Throws as render_conversation.
ChatPrompt chat_prompt(const engine::Variant& variant, const text::Tokenizer& tok,
                       const CompletionRequest& cr, bool add_bos);

}  // namespace sy::server
