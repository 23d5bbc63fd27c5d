// What a chat model's text means, as the family of its template writes it: the reasoning in
// <think>...</think> (Qwen3, DeepSeek-R1, ...), tool calls, and the content around them. Tool
// calls come as <tool_call>{"name", "arguments"}</tool_call> (Hermes, Qwen2.5/3/3.5), as
// [TOOL_CALLS] then a JSON list or name[ARGS]{...} pieces to the end (Mistral), or as an answer
// that is one JSON object {"name", "parameters"} (Llama 3.1-3.3, <|python_tag|> allowed). Text
// arrives in pieces (streaming); a piece that could be the start of a tag is held back until it
// is clear.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace sy::server {

enum class CallSyntax { none, hermes, mistral, llama3 };

struct OutputSyntax {
  bool think = false;           // split <think>...</think> into reasoning
  bool opens_in_think = false;  // the prompt ended inside an open <think>
  CallSyntax calls = CallSyntax::none;
};

// From the template's source (which tags it writes) and the prompt it rendered; calls only when
// the request offers tools and tool_choice is not "none".
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
  // tail: everything from a Mistral [TOOL_CALLS] or a Llama 3 JSON answer to the end, read at
  // finish().
  enum class State { content, reasoning, call, tail };
  void step(Delta& d, bool final);
  // A call's JSON object ({"name", "arguments" or "parameters"}); false when it is not one.
  bool add_call(const nlohmann::ordered_json& j, Delta& d);
  void read_tail(Delta& d);
  void emit(Delta& d, std::string_view content);

  OutputSyntax syntax_;
  std::string prefix_;
  State state_;
  std::string buf_;             // text not yet classified
  std::string call_;            // the body of the open <tool_call>
  bool trim_newlines_ = false;  // content right after </think> starts without its newlines
  bool said_ = false;           // content other than whitespace went out
  size_t n_calls_ = 0;
};

}  // namespace sy::server
