// The pre-tokenizers of byte-level BPE vocabularies, by the names llama.cpp reads from
// tokenizer.ggml.pre: each is a list of split patterns (the models' tokenizer.json regexes, in the
// form llama.cpp applies them) plus the flags that go with the name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "text/regex.h"

namespace sy::text::detail {

struct PreTokenizer {
  std::string type;  // the family a name belongs to ("llama3", "qwen2", ...)
  std::vector<Regex> patterns;
  bool ignore_merges = false;  // a word that is one token as a whole is emitted as it is
  bool add_bos = false;        // the default of tokenizer.ggml.add_bos_token
  bool nfc = false;  // the text is NFC-normalised first (Qwen's tokenizer.json; llama.cpp skips it)
  // SentencePiece-style BPE (Gemma 4): spaces are spelled "▁" before the split, merges run on
  // the UTF-8 characters themselves (no byte-to-character map), leftovers fall back to "<0xXX>".
  bool spm_style = false;
};

// The pre-tokenizer `name` stands for ("" means "default", as in llama.cpp); nullptr when the
// name is unknown. Patterns are compiled once.
const PreTokenizer* find_pre_tokenizer(std::string_view name);
// find_pre_tokenizer, or std::runtime_error("tokenizer.ggml.pre: unknown pre-tokenizer type:
// 'NAME'") as llama.cpp refuses it.
const PreTokenizer& require_pre_tokenizer(std::string_view name);
// Every name find_pre_tokenizer accepts, sorted.
std::vector<std::string> pre_tokenizer_names();

// The words `text` splits into, as UTF-8 (invalid UTF-8 bytes become U+FFFD first, as in
// llama.cpp; then NFC where the pre-tokenizer asks for it).
std::vector<std::string> pretokenize(const PreTokenizer& pre, std::string_view text);

}  // namespace sy::text::detail
