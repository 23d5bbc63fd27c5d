// Text <-> token ids from a GGUF vocabulary: SentencePiece-style ("llama") with byte fallback,
// which also serves the byte-level vocab that `mkmodel` writes, byte-level BPE ("gpt2") with
// the pre-tokenizer tokenizer.ggml.pre names (text/pretokenizer.h), and Gemma 4's BPE over
// SentencePiece-style text ("gemma4").
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace sy::gguf {
class File;
}
namespace sy::grammar {
class TokenTrie;
}

namespace sy::text {

enum class TokenType : int32_t {
  NORMAL = 1,
  UNKNOWN = 2,
  CONTROL = 3,
  USER_DEFINED = 4,
  UNUSED = 5,
  BYTE = 6,
};

struct Vocab {
  std::string model;  // "llama", "gpt2" or "gemma4" (Gemma 4's SentencePiece-style BPE)
  // BPE: the pre-tokenizer (tokenizer.ggml.pre; "gemma4" for that model); "" is llama.cpp's
  // "default"
  std::string pre;
  std::string name;   // general.name: llama.cpp gives phi-3's special tokens rstrip by it
  std::vector<std::string> tokens;
  std::vector<float> scores;        // empty or one per token
  std::vector<TokenType> types;     // empty or one per token
  std::vector<std::string> merges;  // BPE: "a b" in rank order
  int32_t bos = -1, eos = -1, unk = -1, pad = -1;
  int32_t eot = -1, eom = -1;  // end of turn / of message (Llama 3's <|eot_id|>, <|eom_id|>)
  bool add_bos = true;
  bool add_eos = false;  // tokenizer.ggml.add_eos_token: llama.cpp's add_special appends EOS
  bool add_space_prefix = true;  // llama: prepend a space ("▁") as SentencePiece does
};

// The vocab mkmodel writes: <unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF>, then unused
// padding tokens up to n_vocab (>= 259). It is a valid llama.cpp "llama" vocabulary.
Vocab byte_level_vocab(int32_t n_vocab);

// A byte range [begin, end) of a text.
struct TextSpan {
  size_t begin, end;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // add_bos: prepend the BOS token (callers normally pass vocab().add_bos); throws
  // std::runtime_error when asked for a BOS the vocabulary lacks. Empty text encodes to no
  // tokens. USER_DEFINED tokens are matched literally, as llama.cpp does without special parsing;
  // parse_special: CONTROL (and UNKNOWN) tokens written in the text, such as <|eot_id|>, become
  // their ids too (llama.cpp's parse_special). Without it they are plain text.
  std::vector<int32_t> encode(std::string_view text, bool add_bos,
                              bool parse_special = false) const;
  // The same, with CONTROL tokens matched only where they lie wholly inside one of `trusted`
  // (the markup of a rendered chat template, not the messages in it).
  std::vector<int32_t> encode(std::string_view text, bool add_bos,
                              const std::vector<TextSpan>& trusted) const;
  // Text of one token as it appears in output (byte tokens yield their raw byte; control,
  // unknown and unused tokens yield ""). Throws std::out_of_range for a bad id.
  virtual std::string piece(int32_t id) const = 0;
  // Whole-sequence text: drops the one leading space that add_space_prefix introduced ("llama"),
  // and turns the "▁" that byte tokens spell out back into a space. render_special: CONTROL and
  // UNKNOWN tokens show their text (as llama.cpp's /detokenize does).
  std::string decode(const std::vector<int32_t>& ids, bool render_special = false) const;
  const Vocab& vocab() const { return vocab_; }
  int32_t n_vocab() const { return (int32_t)vocab_.tokens.size(); }
  // Every id that ends generation: eos, eot, eom and the tokens llama.cpp recognises by their
  // text as end-of-turn markers (<|eot_id|>, <|im_end|>, <|end|>, <end_of_turn>, ...), sorted.
  const std::vector<int32_t>& end_of_generation() const { return eog_; }
  // Every token's output bytes as a trie, for grammar masks; built on first use, then shared.
  // End-of-generation and other control tokens have no bytes in it.
  std::shared_ptr<const grammar::TokenTrie> token_trie() const;

  static std::unique_ptr<Tokenizer> create(Vocab vocab);  // throws std::runtime_error
  // Reads tokenizer.ggml.* keys; throws std::runtime_error naming the missing/bad key.
  static std::unique_ptr<Tokenizer> from_gguf(const sy::gguf::File& file);

 protected:
  explicit Tokenizer(Vocab v) : vocab_(std::move(v)) {}
  // trusted == nullptr: CONTROL tokens match everywhere when parse_special, nowhere otherwise.
  virtual std::vector<int32_t> encode_with(std::string_view text, bool add_bos, bool parse_special,
                                           const std::vector<TextSpan>* trusted) const = 0;
  Vocab vocab_;
  std::vector<int32_t> eog_;

 private:
  mutable std::once_flag trie_once_;
  mutable std::shared_ptr<const grammar::TokenTrie> trie_;
};

// What `switchyard tokenize` and the server's POST /tokenize do with a text.
struct TokenizeOptions {
  bool bos = false;            // prepend the BOS token (an error when the vocabulary has none)
  bool parse_special = false;  // control tokens written in the text become their ids
  bool eos = false;            // append the EOS token (an error when the vocabulary has none)
};
std::vector<int32_t> tokenize(const Tokenizer& tokenizer, std::string_view text,
                              TokenizeOptions options);

// Streaming form of decode(): push() returns the text complete so far and holds back a trailing
// incomplete UTF-8 sequence (byte tokens split characters across tokens) until a later push or
// finish(). decode(ids) equals the concatenation of push(id)... and finish() with
// strip_space_prefix = (model "llama" && add_space_prefix). The Tokenizer must outlive it.
class Detokenizer {
 public:
  // strip_space_prefix: drop one leading space (pass false when decoding a continuation).
  // render_special: CONTROL and UNKNOWN tokens show their text.
  Detokenizer(const Tokenizer& tokenizer, bool strip_space_prefix, bool render_special = false);
  std::string push(int32_t id);
  std::string finish();

 private:
  std::string take_complete();
  void flush_bytes(bool all);
  const Tokenizer& tok_;
  bool spm_;
  bool strip_;
  bool special_;
  std::string bytes_;    // spm: byte-token bytes that may still be the start of a "▁"
  std::string pending_;  // decoded text not returned yet (an incomplete UTF-8 tail)
};

}  // namespace sy::text
