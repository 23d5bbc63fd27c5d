// gpt-oss's answers (OpenAI's harmony format), as the model writes them after the prompt's
// `<|start|>assistant`: messages of a header and a body, `<|channel|>analysis<|message|>...`
// (reasoning), `<|channel|>final<|message|>...` (content) and
// `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}` (a tool call, its
// recipient also allowed before the channel), each after `<|start|>assistant` but the first.
// `<|end|>` closes a message (the tokenizer makes it text, as llama.cpp does); `<|call|>` and
// `<|return|>` end the turn and are not text. A message ends at `<|end|>` or the next
// `<|start|>` / `<|channel|>`. A call's arguments stream as they arrive.
#pragma once

#include <string>
#include <string_view>

#include "server/call_reader.h"
#include "server/chat_output.h"

namespace sy::server {

class HarmonyOutput {
 public:
  // tools: messages to functions.NAME are calls (else their text is content).
  HarmonyOutput(bool tools, std::string call_id_prefix);
  ChatOutput::Delta feed(std::string_view text);
  ChatOutput::Delta finish();
  size_t calls() const { return calls_.count(); }

 private:
  // start: nothing read yet (an answer without markup is all content); body: a message's text.
  enum class State { start, header, body };
  enum class Kind { content, reasoning, call };
  void step(ChatOutput::Delta& d, bool final);
  void open_body(ChatOutput::Delta& d);
  void body_text(ChatOutput::Delta& d, std::string_view text);

  bool tools_;
  CallStream calls_;
  State state_ = State::start;
  Kind kind_ = Kind::content;
  std::string buf_, header_;
};

}  // namespace sy::server
