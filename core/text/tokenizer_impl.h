// Internal to switchyard_text: the shared base of the concrete tokenizers.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/tokenizer.h"

namespace sy::text::detail {

// Throws std::runtime_error when the vocab is inconsistent (sizes, ids, model, merges).
void validate(const Vocab& v);

// U+2581, SentencePiece's space: SentencePiece vocabularies and Gemma 4's BPE spell spaces so.
inline constexpr std::string_view kSpaceMark = "\xE2\x96\x81";
// `text` with every space spelled as kSpaceMark, and back.
std::string escape_spaces(std::string_view text);
std::string unescape_spaces(std::string_view text);
// Like llama.cpp, a UTF-8 sequence's length comes from its lead byte alone.
inline size_t utf8_len(unsigned char c) {
  static constexpr uint8_t lens[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return lens[c >> 4];
}

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// A stretch of input text to tokenise, or (token >= 0) a special token found in it.
struct Fragment {
  std::string_view text;
  int32_t token = -1;
};

class VocabTokenizer : public Tokenizer {
 protected:
  // Also settles what llama.cpp derives from the vocab at load: tokens named like end-of-turn
  // markers become CONTROL, eot / eom are found by their text when no key gave them, the
  // end-of-generation set, and phi-3's rstrip on special tokens.
  explicit VocabTokenizer(Vocab v);
  // Encodes one stretch of text that holds no special token. after_special: the stretch begins
  // the text or follows a special token (SentencePiece puts its space prefix there).
  virtual void encode_text(std::string_view text, bool after_special,
                           std::vector<int32_t>& out) const = 0;
  int32_t find(std::string_view text) const;  // -1 when absent
  TokenType type(int32_t id) const;           // NORMAL when the vocab has no types
  float score(int32_t id) const;              // 0 when the vocab has no scores
  // The byte fallback token "<0xXX>" of byte b; -1 when the vocab lacks it.
  int32_t byte_token(unsigned char b) const { return byte_ids_[b]; }
  // A BYTE token's byte ("<0x41>" is "A"); the text itself when it is not of that form.
  std::string byte_piece(int32_t id) const;
  void check_id(int32_t id) const;            // std::out_of_range
  // llama.cpp's special-token partition, longest token first: USER_DEFINED tokens always,
  // CONTROL and UNKNOWN ones when parse_special, or (trusted != nullptr) where they lie wholly
  // inside a trusted span.
  std::vector<Fragment> split_specials(std::string_view text, bool parse_special,
                                       const std::vector<TextSpan>* trusted) const;
  void push_bos(std::vector<int32_t>& out) const;

 private:
  std::vector<int32_t> encode_with(std::string_view text, bool add_bos, bool parse_special,
                                   const std::vector<TextSpan>* trusted) const final;
  void settle_special_tokens();

  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids_;
  std::vector<int32_t> specials_;  // CONTROL, USER_DEFINED and UNKNOWN; longest text first
  std::vector<uint8_t> rstrip_;    // per token: whitespace after it is dropped (phi-3)
  int32_t byte_ids_[256];
};

std::unique_ptr<Tokenizer> make_spm(Vocab v);
std::unique_ptr<Tokenizer> make_bpe(Vocab v);

}  // namespace sy::text::detail
