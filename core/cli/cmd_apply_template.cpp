// switchyard apply-template: a conversation rendered by a chat template, exact bytes on stdout,
// as transformers' apply_chat_template renders it (llama-server's POST /apply-template).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "cli/options.h"
#include "gguf/gguf.h"
#include "switchyard/common/error.h"
#include "text/chat_template.h"
#include "text/conversation.h"

namespace sy::cli {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw sy::Error(SY_ERR_NOT_FOUND, "cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int cmd_apply_template(int argc, char** argv) {
  Command app("apply-template",
              "Prints the conversation as the chat template renders it: the GGUF file's "
              "tokenizer.chat_template (or --template), run as Hugging Face's "
              "apply_chat_template runs it. The bytes go to stdout with nothing added.");
  std::string model_path, template_path, conversation_path;
  app.add_option("model", model_path, "the GGUF file whose template and special tokens to use");
  app.add_option("--template", template_path, "a Jinja template file instead of the model's");
  app.add_option("--conversation", conversation_path,
                 "JSON: messages, tools, add_generation_prompt, kwargs, special_tokens, "
                 "strftime_now (the reference folder's format)")
      ->required();
  if (!parse(app, argc, argv)) return 0;
  if (model_path.empty() == template_path.empty())
    throw UsageError("give exactly one of a GGUF file or --template T.jinja");
  const auto json = nlohmann::ordered_json::parse(read_file(conversation_path), nullptr, false);
  if (json.is_discarded()) throw sy::Error(conversation_path + ": not valid JSON");
  text::Conversation c;
  try {
    c = text::conversation_from_json(json);
  } catch (const Error& e) {
    throw sy::Error(conversation_path + ": " + e.what());
  }
  text::ChatTemplate t;
  if (!template_path.empty()) {
    t = text::ChatTemplate::jinja(read_file(template_path));
  } else {
    const auto file = gguf::File::open(model_path);
    t = text::ChatTemplate::resolve("", file->get_string("tokenizer.chat_template"));
    if (!t.warning().empty())
      std::fprintf(stderr, "%s: %s\n", model_path.c_str(), t.warning().c_str());
    if (!t.is_jinja() && t.ok())
      std::fprintf(stderr, "%s: rendered by the built-in '%s' format\n", model_path.c_str(),
                   std::string(text::chat_format_name(t.format())).c_str());
    if (c.special_tokens.empty()) {
      const auto tok = text::Tokenizer::from_gguf(*file);
      c.special_tokens = text::special_token_strings(tok->vocab());
    }
  }
  const text::RenderedChat r = t.render(c);
  std::fwrite(r.text.data(), 1, r.text.size(), stdout);
  return 0;
}

}  // namespace sy::cli
