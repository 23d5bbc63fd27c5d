// One tool call's text as it arrives, read so that its arguments can stream as OpenAI streams
// them: the call's name first, then pieces of `function.arguments`. Two shapes:
// - object: {"name": "...", "arguments" (or "parameters"): {...}}, the name first (Hermes/Qwen,
//   Llama 3). Once the name and the opening brace of the arguments are read, it is a call; a text
//   of any other shape is left to be read whole once it ends (state `other`).
// - arguments: the text is the arguments alone, the name having come in the syntax's own markup
//   (gpt-oss, DeepSeek).
// Arguments go out without the whitespace outside their strings (the compact text JSON writers
// give), and end where their object closes; what follows is rest().
#pragma once

#include <string>
#include <string_view>

namespace sy::server {

class CallReader {
 public:
  enum class Shape { object, arguments };
  enum class State { header, args, done, other };
  explicit CallReader(Shape shape);

  // Reads more of the call's text; returns the arguments' new piece (may be empty).
  std::string feed(std::string_view text);
  State state() const { return state_; }
  bool started() const { return state_ == State::args || state_ == State::done; }
  const std::string& name() const { return name_; }
  // The text after the arguments' closing brace (state done).
  std::string_view rest() const { return std::string_view(text_).substr(pos_); }

 private:
  enum class Header { need_more, ok, mismatch };
  Header read_header();
  std::string read_args();

  Shape shape_;
  State state_;
  std::string text_;
  size_t pos_ = 0;  // where reading goes on
  std::string name_;
  int depth_ = 0;
  bool in_string_ = false, escape_ = false;
  bool raw_ = false;  // arguments that are not a JSON object or array: passed on as they are
};

}  // namespace sy::server
