#include "server/chat_prompt.h"

#include "server/api_error.h"
#include "server/output_grammar.h"
#include "text/conversation.h"

namespace sy::server {

text::RenderedChat render_conversation(const engine::Variant& variant, const text::Tokenizer& tok,
                                       text::Conversation c) {
  const text::ChatTemplate& t = variant.chat_template;
  if (!t.ok())
    throw ApiError(400, t.error(), "invalid_request_error", "messages",
                   "unsupported_chat_template");
  if (c.special_tokens.empty()) c.special_tokens = text::special_token_strings(tok.vocab());
  try {
    return t.render(c);
  } catch (const text::ChatTemplateError& e) {
    throw ApiError(
        400, std::string("The model's chat template failed on this conversation: ") + e.what(),
        "invalid_request_error", "messages", "chat_template_error");
  }
}

text::RenderedChat render_request(const engine::Variant& variant, const text::Tokenizer& tok,
                                  const CompletionRequest& cr) {
  text::Conversation c;
  c.messages = cr.template_messages;
  c.tools = cr.tools;
  if (cr.template_kwargs.is_object()) c.kwargs = cr.template_kwargs;
  c.add_generation_prompt = cr.add_generation_prompt;
  return render_conversation(variant, tok, std::move(c));
}

ChatPrompt chat_prompt(const engine::Variant& variant, const text::Tokenizer& tok,
                       const CompletionRequest& cr, bool add_bos) {
  text::RenderedChat r = render_request(variant, tok, cr);
  ChatPrompt out;
  out.syntax = output_syntax(variant.chat_template.source(), r.text,
                             !cr.tools.is_null() && cr.tool_choice != "none");
  if (cr.tool_choice == "required" || cr.tool_choice == "function")
    out.grammar = tool_call_grammar(out.syntax, cr.tools, cr.tool_name, cr.parallel_tool_calls);
  const int32_t bos = tok.vocab().bos;
  if (add_bos && bos >= 0) {
    const std::string& s = tok.vocab().tokens[static_cast<size_t>(bos)];
    if (!s.empty() && r.text.compare(0, s.size(), s) == 0 && !r.markup.empty() &&
        r.markup[0].begin == 0 && r.markup[0].end >= s.size()) {
      r.text.erase(0, s.size());
      std::vector<text::TextSpan> shifted;
      for (const auto& m : r.markup)
        if (m.end > s.size())
          shifted.push_back({m.begin > s.size() ? m.begin - s.size() : 0, m.end - s.size()});
      r.markup = std::move(shifted);
    }
  }
  out.ids = tok.encode(r.text, add_bos, r.markup);
  return out;
}

}  // namespace sy::server
