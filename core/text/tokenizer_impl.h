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

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// A stretch of input text to tokenise, or (token >= 0) a USER_DEFINED token found in it.
struct Fragment {
  std::string_view text;
  int32_t token = -1;
};

class VocabTokenizer : public Tokenizer {
 protected:
  explicit VocabTokenizer(Vocab v);
  int32_t find(std::string_view text) const;  // -1 when absent
  TokenType type(int32_t id) const;           // NORMAL when the vocab has no types
  float score(int32_t id) const;              // 0 when the vocab has no scores
  void check_id(int32_t id) const;            // std::out_of_range
  // llama.cpp splits USER_DEFINED tokens out of the text (longest first) before tokenising.
  std::vector<Fragment> split_user_defined(std::string_view text) const;
  void push_bos(std::vector<int32_t>& out) const;

 private:
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ids_;
  std::vector<int32_t> user_defined_;  // longest text first
};

// The GPT-2 pre-tokenizer pattern, by hand (exposed for tests).
std::vector<std::string_view> gpt2_pretokenize(std::string_view text);

std::unique_ptr<Tokenizer> make_spm(Vocab v);
std::unique_ptr<Tokenizer> make_bpe(Vocab v);

}  // namespace sy::text::detail
