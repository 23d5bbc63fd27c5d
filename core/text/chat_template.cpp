// Chat format names, recognising a Jinja template by its markers, and choosing a model's format.
#include "text/chat_template.h"

#include <stdexcept>

#include "jinja/template.h"
#include "switchyard/common/error.h"

namespace sy::text {

const std::vector<std::string>& chat_format_names() {
  static const std::vector<std::string> names = {"chatml",
                                                 "llama2",
                                                 "llama2-sys",
                                                 "llama2-sys-bos",
                                                 "llama2-sys-strip",
                                                 "mistral-v1",
                                                 "mistral-v3",
                                                 "mistral-v3-tekken",
                                                 "mistral-v7",
                                                 "mistral-v7-tekken",
                                                 "phi3",
                                                 "phi4",
                                                 "falcon3",
                                                 "zephyr",
                                                 "monarch",
                                                 "gemma",
                                                 "orion",
                                                 "openchat",
                                                 "vicuna",
                                                 "vicuna-orca",
                                                 "deepseek",
                                                 "deepseek2",
                                                 "deepseek3",
                                                 "command-r",
                                                 "llama3",
                                                 "chatglm3",
                                                 "chatglm4",
                                                 "glmedge",
                                                 "minicpm",
                                                 "exaone3",
                                                 "exaone4",
                                                 "rwkv-world",
                                                 "granite",
                                                 "gigachat",
                                                 "megrez",
                                                 "yandex",
                                                 "bailing",
                                                 "llama4",
                                                 "smolvlm"};
  return names;
}

std::string_view chat_format_name(ChatFormat f) {
  return chat_format_names().at(static_cast<size_t>(f));
}

std::optional<ChatFormat> chat_format_by_name(std::string_view name) {
  const auto& names = chat_format_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<ChatFormat>(i);
  return std::nullopt;
}

std::optional<ChatFormat> detect_chat_format(std::string_view t) {
  using F = ChatFormat;
  if (auto named = chat_format_by_name(t)) return named;
  auto has = [&](std::string_view marker) { return t.find(marker) != std::string_view::npos; };
  if (has("<|im_start|>")) {
    if (has("<|im_sep|>")) return F::phi4;
    if (has("<end_of_utterance>")) return F::smolvlm;  // <|im_start|> as BOS, not ChatML
    return F::chatml;
  }
  if (t.substr(0, 7) == "mistral" || has("[INST]")) {
    if (has("[SYSTEM_PROMPT]")) return F::mistral_v7;
    // Mistral's official v1 / v3 / v3-tekken templates.
    if (has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]")) {
      if (has(" [INST]")) return F::mistral_v1;
      if (has("\"[INST]\"")) return F::mistral_v3_tekken;
      return F::mistral_v3;
    }
    if (has("content.strip()")) return F::llama2_sys_strip;
    if (has("bos_token + '[INST]")) return F::llama2_sys_bos;
    if (has("<<SYS>>")) return F::llama2_sys;
    return F::llama2;
  }
  if (has("<|assistant|>") && has("<|end|>")) return F::phi3;
  if (has("[gMASK]<sop>")) return F::chatglm4;
  if (has("<|assistant|>") && has("<|user|>")) return has("</s>") ? F::falcon3 : F::glmedge;
  if (has("<|{{ item['role'] }}|>") && has("<|begin_of_image|>")) return F::glmedge;
  if (has("<|user|>") && has("<|endoftext|>")) return F::zephyr;
  if (has("bos_token + message['role']")) return F::monarch;
  if (has("<start_of_turn>")) return F::gemma;
  if (has("'\\n\\nAssistant: ' + eos_token")) return F::orion;
  if (has("GPT4 Correct ")) return F::openchat;
  if (has("USER: ") && has("ASSISTANT: ")) return has("SYSTEM: ") ? F::vicuna_orca : F::vicuna;
  if (has("### Instruction:") && has("<|EOT|>")) return F::deepseek;
  if (has("<|START_OF_TURN_TOKEN|>") && has("<|USER_TOKEN|>")) return F::command_r;
  if (has("<|start_header_id|>") && has("<|end_header_id|>")) return F::llama3;
  if (has("[gMASK]sop")) return F::chatglm3;
  if (has("<\xE7\x94\xA8\xE6\x88\xB7>")) return F::minicpm;  // <用户>
  if (has("'Assistant: ' + message['content'] + eos_token")) return F::deepseek2;
  // <｜Assistant｜>, <｜User｜>, <｜end▁of▁sentence｜>
  if (has("<\xEF\xBD\x9C"
          "Assistant\xEF\xBD\x9C>") &&
      has("<\xEF\xBD\x9C"
          "User\xEF\xBD\x9C>") &&
      has("<\xEF\xBD\x9C"
          "end\xE2\x96\x81"
          "of\xE2\x96\x81"
          "sentence\xEF\xBD\x9C>"))
    return F::deepseek3;
  if (has("[|system|]") && has("[|assistant|]") && has("[|endofturn|]"))
    return has("[|tool|]") ? F::exaone4 : F::exaone3;
  if (has("rwkv-world") || has("{{- 'User: ' + message['content']|trim + '\\n\\n' -}}"))
    return F::rwkv_world;
  if (has("<|start_of_role|>")) return F::granite;
  if (has("message['role'] + additional_special_tokens[0] + message['content'] + "
          "additional_special_tokens[1]"))
    return F::gigachat;
  if (has("<|role_start|>")) return F::megrez;
  if (has(" \xD0\x90\xD1\x81\xD1\x81\xD0\xB8\xD1\x81\xD1\x82\xD0\xB5\xD0\xBD\xD1\x82:"))
    return F::yandex;  // " Ассистент:"
  if (has("<role>ASSISTANT</role>") && has("'HUMAN'")) return F::bailing;
  if (has("<|header_start|>") && has("<|header_end|>")) return F::llama4;
  return std::nullopt;
}

namespace {

// The start of a template for a message: about 60 bytes, whole UTF-8 characters, one line.
std::string excerpt(const std::string& t) {
  size_t n = std::min<size_t>(t.size(), 60);
  while (n < t.size() && (static_cast<unsigned char>(t[n]) & 0xC0) == 0x80) --n;
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (t[i] == '\n')
      out += "\\n";
    else if (t[i] == '"')
      out += "\\\"";
    else
      out += t[i];
  }
  return out + (n < t.size() ? "..." : "");
}

}  // namespace

ChatTemplate ChatTemplate::resolve(const std::string& configured_name,
                                   const std::optional<std::string>& file_template) {
  ChatTemplate c;
  if (!configured_name.empty()) {
    c.format_ = chat_format_by_name(configured_name);
    if (!c.format_) throw sy::Error("unknown chat template '" + configured_name + "'");
    return c;
  }
  if (!file_template) {
    c.format_ = ChatFormat::chatml;  // llama.cpp's fallback for a file without a template
    return c;
  }
  c.format_ = chat_format_by_name(*file_template);  // a family's bare name
  if (c.format_) return c;
  std::string why;
  try {
    c.jinja_ = std::make_shared<const jinja::Template>(*file_template);
    c.source_ = *file_template;
    return c;
  } catch (const jinja::Error& e) {
    why = e.what();
  }
  c.format_ = detect_chat_format(*file_template);
  if (c.format_) {
    c.warning_ = "the model's chat template does not parse as Jinja (" + why +
                 "); chats use the built-in '" + std::string(chat_format_name(*c.format_)) +
                 "' format its markers name";
  } else {
    std::string names;
    for (const auto& n : chat_format_names()) names += (names.empty() ? "" : ", ") + n;
    c.error_ = "The model's chat template (tokenizer.chat_template \"" + excerpt(*file_template) +
               "\") is not one of the template families Switchyard renders, so chat requests "
               "are refused (completions still work). Set [model] chat_template to one of: " +
               names + ". It does not parse as Jinja either: " + why + ".";
  }
  return c;
}

}  // namespace sy::text
