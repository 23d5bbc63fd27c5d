// What a chat model's text means, as the family of its template writes it: the reasoning in
// <think>...</think> (Qwen3, DeepSeek-R1, ...) or in gpt-oss's analysis channel, tool calls, and
// the content around them. Tool calls come as <tool_call>{"name", "arguments"}</tool_call>
// (Hermes, Qwen2.5/3/3.5), as [TOOL_CALLS] then a JSON list or name[ARGS]{...} pieces to the end
// (Mistral), as an answer that is one JSON object {"name", "parameters"} (Llama 3.1-3.3,
// <|python_tag|> allowed), between DeepSeek's <｜tool▁call▁begin｜> markers, or as gpt-oss
// messages to=functions.NAME (harmony_output.h). Text arrives in pieces (streaming); a piece that
// could be the start of a tag is held back until it is clear.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "server/call_reader.h"

namespace sy::server {

enum class CallSyntax { none, hermes, mistral, llama3, deepseek, harmony, dsml };

struct OutputSyntax {
  bool think = false;           // split think_open...think_close into reasoning
  bool opens_in_think = false;  // the prompt ended inside an open think_open
  CallSyntax calls = CallSyntax::none;
  bool channels = false;  // gpt-oss's harmony messages: analysis is reasoning, final is content
  // DeepSeek R1 / V3 calls: "function<｜tool▁sep｜>NAME" and the arguments in a ```json fence
  // (V3.1: "NAME<｜tool▁sep｜>" and the arguments bare).
  bool fenced = false;
  // Mistral calls as NAME[ARGS]{...} after each [TOOL_CALLS] (Small 3.2, Devstral, Ministral 3),
  // not a JSON list (Nemo).
  bool args_tag = false;
  // <think> ... </think> (Qwen3, DeepSeek R1, ...), or [THINK] ... [/THINK] (Magistral,
  // Ministral 3 reasoning).
  std::string_view think_open = "<think>", think_close = "</think>";
};

// From the template's source (which tags it writes) and the prompt it rendered; calls only when
// the request offers tools and tool_choice is not "none".
OutputSyntax output_syntax(std::string_view template_source, std::string_view prompt,
                           bool tools_offered);

// Where `tag` starts in s, or where a prefix of it ends s (npos: neither): text before that
// position is safe to emit.
size_t tag_or_prefix(std::string_view s, std::string_view tag, bool& whole);

// The earliest of `tags` in s, or of their prefixes ending s (a whole tag wins a tie).
struct TagAt {
  size_t at = std::string_view::npos;
  std::string_view tag;
  bool whole = false;
};
TagAt earliest_tag(std::string_view s, const std::vector<std::string_view>& tags);

class HarmonyOutput;

class ChatOutput {
 public:
  ChatOutput(OutputSyntax syntax, std::string call_id_prefix);
  ~ChatOutput();
  ChatOutput(ChatOutput&&) noexcept;
  ChatOutput& operator=(ChatOutput&&) noexcept;

  struct Delta {
    std::string content, reasoning;
    std::vector<ToolCall> calls;  // pieces
    bool empty() const { return content.empty() && reasoning.empty() && calls.empty(); }
  };
  Delta feed(std::string_view text);
  // The end of the text: what was held back; an unclosed <tool_call> that never became a call is
  // content.
  Delta finish();
  size_t calls() const;

 private:
  // tail: everything from a Mistral [TOOL_CALLS] or a Llama 3 JSON answer to the end.
  // deepseek: between <｜tool▁calls▁begin｜> and its end, outside any one call.
  // dsml: inside DeepSeek V3.2's <｜DSML｜function_calls> block.
  enum class State { content, reasoning, call, tail, deepseek, dsml };
  // How far a tail is read: before its first call, a Mistral name (up to [ARGS]), a JSON call
  // object, its arguments, after a list item ("}", then "," or "]"), after a Mistral piece (the
  // next [TOOL_CALLS]), done (the rest is ignored), or not streamable: read whole at the end.
  enum class Tail { start, name, item, args, item_end, piece_end, done, whole };
  void step(Delta& d, bool final);
  bool step_call(Delta& d, bool final);
  bool step_deepseek(Delta& d, bool final);
  bool step_dsml(Delta& d, bool final);
  void enter_tail(size_t tag_size);
  void stream_tail(Delta& d);
  void stream_deepseek(Delta& d);
  void close_call(Delta& d);
  // A call's JSON object ({"name", "arguments" or "parameters"}); false when it is not one.
  bool add_call(const nlohmann::ordered_json& j, Delta& d);
  void read_tail(Delta& d);
  void emit(Delta& d, std::string_view content);

  OutputSyntax syntax_;
  State state_;
  std::string buf_;   // text not yet classified
  std::string call_;  // the open call's text, or the tail's
  size_t fed_ = 0;    // how much of call_ is read
  Tail tail_ = Tail::start;
  bool list_ = false;         // a Mistral tail that is a JSON list
  size_t calls_at_tail_ = 0;  // calls before the tail, or before a DSML block
  CallStream calls_;
  bool trim_newlines_ = false;  // content right after </think> starts without its newlines
  bool said_ = false;           // content other than whitespace went out
  std::unique_ptr<HarmonyOutput> harmony_;
};

}  // namespace sy::server
