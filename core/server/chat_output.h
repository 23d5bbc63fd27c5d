// What a chat model's text means, as the family of its template writes it: the reasoning in
// <think>...</think> (Qwen3, DeepSeek-R1, ...), tool calls in <tool_call>{"name", "arguments"}
// </tool_call> (Hermes, Qwen2.5/3/3.5, ...), and the content around them. Text arrives in pieces
// (streaming); a piece that could be the start of a tag is held back until it is clear.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sy::server {

struct OutputSyntax {
  bool think = false;           // split <think>...</think> into reasoning
  bool opens_in_think = false;  // the prompt ended inside an open <think>
  bool tool_calls = false;      // parse <tool_call> blocks
};

// From the template's source (which tags it writes) and the prompt it rendered; tool_calls only
// when the request offers tools and tool_choice is not "none".
OutputSyntax output_syntax(std::string_view template_source, std::string_view prompt,
                           bool tools_offered);

struct ToolCall {
  size_t index = 0;  // the choice's n-th call
  std::string id;    // call_<request id>_<choice>_<n>
  std::string name;
  std::string arguments;  // a JSON object, as text
};

class ChatOutput {
 public:
  ChatOutput(OutputSyntax syntax, std::string call_id_prefix);

  struct Delta {
    std::string content, reasoning;
    std::vector<ToolCall> calls;
    bool empty() const { return content.empty() && reasoning.empty() && calls.empty(); }
  };
  Delta feed(std::string_view text);
  // The end of the text: what was held back; an unclosed <tool_call> is content.
  Delta finish();
  size_t calls() const { return n_calls_; }

 private:
  enum class State { content, reasoning, call };
  void step(Delta& d, bool final);

  OutputSyntax syntax_;
  std::string prefix_;
  State state_;
  std::string buf_;             // text not yet classified
  std::string call_;            // the body of the open <tool_call>
  bool trim_newlines_ = false;  // content right after </think> starts without its newlines
  size_t n_calls_ = 0;
};

}  // namespace sy::server
