// Chat prompts. A model's own tokenizer.chat_template (Jinja) is run as Hugging Face's
// apply_chat_template runs it (jinja/template.h). The formats of llama.cpp's built-in chat
// formatter remain for files without a template, for a template the engine cannot parse (it is
// recognised by its markers as one of these families, as llama.cpp recognises it), and for a
// format named in [model] chat_template.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "switchyard/common/error.h"
#include "text/tokenizer.h"

namespace sy::jinja {
class Template;
}

namespace sy::text {

enum class ChatFormat {
  chatml,
  llama2,
  llama2_sys,
  llama2_sys_bos,
  llama2_sys_strip,
  mistral_v1,
  mistral_v3,
  mistral_v3_tekken,
  mistral_v7,
  mistral_v7_tekken,
  phi3,
  phi4,
  falcon3,
  zephyr,
  monarch,
  gemma,
  orion,
  openchat,
  vicuna,
  vicuna_orca,
  deepseek,
  deepseek2,
  deepseek3,
  command_r,
  llama3,
  chatglm3,
  chatglm4,
  glmedge,
  minicpm,
  exaone3,
  exaone4,
  rwkv_world,
  granite,
  gigachat,
  megrez,
  yandex,
  bailing,
  llama4,
  smolvlm,
};

struct ChatMessage {
  std::string role;  // system, user, assistant, tool, ... ("developer" is taken as "system")
  std::string content;
};

// A conversation as prompt text, and the byte ranges the format itself wrote (its markup, role
// names included): control tokens are parsed there and never in the messages' content
// (Tokenizer::encode with trusted spans).
struct RenderedChat {
  std::string text;
  std::vector<TextSpan> markup;
};

// llama.cpp's names ("chatml", "llama2-sys", "mistral-v7", "command-r", ...), in enum order.
const std::vector<std::string>& chat_format_names();
std::string_view chat_format_name(ChatFormat f);
std::optional<ChatFormat> chat_format_by_name(std::string_view name);

// The family a Jinja chat template belongs to by its markers, as llama.cpp's
// llm_chat_detect_template decides (a template that is exactly a family's name is that family);
// nullopt when none matches.
std::optional<ChatFormat> detect_chat_format(std::string_view jinja);

// The conversation in the format; add_generation_prompt: end with the opening of an assistant
// turn (formats that have one).
RenderedChat render_chat(ChatFormat format, const std::vector<ChatMessage>& messages,
                         bool add_generation_prompt);

struct Conversation;  // text/conversation.h

// A chat template that fails to render: the message names the template line.
class ChatTemplateError : public Error {
 public:
  using Error::Error;
};

// How a model's chats become prompts: [model] chat_template when configured (a built-in format);
// else its tokenizer.chat_template run as Jinja; else, when the template does not parse, the
// built-in family its markers name (a warning() says why); else chatml when the file has no
// template (llama.cpp's fallback). A template that neither parses nor matches a family leaves it
// unusable: error() says so, naming the template.
class ChatTemplate {
 public:
  static ChatTemplate resolve(const std::string& configured_name,
                              const std::optional<std::string>& file_template);
  // The template's own text, run as Jinja, whatever it is (apply-template --template).
  static ChatTemplate jinja(const std::string& source);

  bool ok() const { return format_.has_value() || jinja_ != nullptr; }
  bool is_jinja() const { return jinja_ != nullptr; }
  ChatFormat format() const { return *format_; }  // only when ok() and !is_jinja()
  const std::string& error() const { return error_; }
  const std::string& warning() const { return warning_; }
  const std::string& source() const { return source_; }  // the Jinja text, when is_jinja()
  // Throws std::runtime_error(error()) when !ok(), ChatTemplateError when the Jinja template
  // fails (raise_exception, an undefined value, a limit).
  RenderedChat render(const Conversation& c) const;
  RenderedChat render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

 private:
  std::optional<ChatFormat> format_;
  std::shared_ptr<const jinja::Template> jinja_;
  std::string error_, warning_, source_;
};

}  // namespace sy::text
