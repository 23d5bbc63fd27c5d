// A conversation as transformers' apply_chat_template takes it, for text::ChatTemplate::render.
#pragma once

#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "text/tokenizer.h"

namespace sy::text {

// A conversation as transformers' apply_chat_template takes it: the template sees `messages`,
// `tools`, `documents`, `add_generation_prompt`, the special-token strings, then `kwargs`
// (chat_template_kwargs: enable_thinking, reasoning_effort, ...), and strftime_now().
struct Conversation {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;      // null: none
  nlohmann::ordered_json documents;  // null: none
  bool add_generation_prompt = true;
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
  // bos_token, eos_token, pad_token, unk_token: the vocabulary's strings (template markup).
  std::vector<std::pair<std::string, std::string>> special_tokens;
  std::optional<std::tm> now;  // what strftime_now() formats; the clock when empty
};

// Throws std::invalid_argument naming the field when `j` is not a conversation: an object with
// a `messages` array, and optionally tools, documents, add_generation_prompt, kwargs,
// special_tokens (strings) and strftime_now ("YYYY-MM-DD", as the reference folder pins it).
Conversation conversation_from_json(const nlohmann::ordered_json& j);

// The special-token strings a template is given, from the vocabulary.
std::vector<std::pair<std::string, std::string>> special_token_strings(const Vocab& vocab);

}  // namespace sy::text
