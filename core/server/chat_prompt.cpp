#include "server/chat_prompt.h"

#include "server/api_error.h"

namespace sy::server {

std::vector<int32_t> chat_prompt_ids(const engine::Variant& variant, const text::Tokenizer& tok,
                                     const std::vector<ChatMessage>& messages, bool add_bos,
                                     bool add_generation_prompt) {
  const text::ChatTemplate& t = variant.chat_template;
  if (!t.ok())
    throw ApiError(400, t.error(), "invalid_request_error", "messages",
                   "unsupported_chat_template");
  std::vector<text::ChatMessage> msgs;
  msgs.reserve(messages.size());
  for (const auto& m : messages) msgs.push_back({m.role, m.content});
  const text::RenderedChat r = t.render(msgs, add_generation_prompt);
  return tok.encode(r.text, add_bos, r.markup);
}

}  // namespace sy::server
