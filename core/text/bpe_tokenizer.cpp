// BPE as llama.cpp runs it: split the text with the vocabulary's pre-tokenizer
// (tokenizer.ggml.pre), merge adjacent pairs by lowest merge rank. Byte-level ("gpt2") maps each
// word's bytes to printable characters first; SentencePiece-style (Gemma 4's "gemma4") spells
// spaces "▁", merges UTF-8 characters and falls back to "<0xXX>" byte tokens.
#include <algorithm>
#include <array>
#include <cstdint>
#include <queue>
#include <stdexcept>

#include "text/pretokenizer.h"
#include "text/tokenizer_impl.h"
#include "text/unicode.h"

namespace sy::text::detail {

namespace {

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the rest are shifted
// to U+0100 upwards in byte order.
struct ByteMap {
  std::array<std::string, 256> to_text;
  std::array<int16_t, 512> to_byte;  // by code point; -1 when not a mapped character
  ByteMap() {
    to_byte.fill(-1);
    uint32_t extra = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const uint32_t cp = printable ? b : 256 + extra++;
      append_utf8(to_text[b], cp);
      to_byte[cp] = int16_t(b);
    }
  }
};

const ByteMap& byte_map() {
  static const ByteMap m;
  return m;
}

}  // namespace

namespace {

class BpeTokenizer final : public VocabTokenizer {
 public:
  explicit BpeTokenizer(Vocab v)
      : VocabTokenizer(std::move(v)), pre_(require_pre_tokenizer(vocab_.pre)) {
    ranks_.reserve(vocab_.merges.size());
    // The first occurrence of a pair keeps its rank.
    for (size_t i = 0; i < vocab_.merges.size(); ++i) ranks_.emplace(vocab_.merges[i], int32_t(i));
  }

  void encode_text(std::string_view text, bool, std::vector<int32_t>& out) const override {
    const std::string escaped = pre_.spm_style ? escape_spaces(text) : std::string();
    for (const std::string& w : pretokenize(pre_, pre_.spm_style ? escaped : text))
      encode_word(w, out);
  }

  std::string piece(int32_t id) const override {
    check_id(id);
    const std::string& t = vocab_.tokens[id];
    switch (type(id)) {
      case TokenType::NORMAL: {
        if (pre_.spm_style) return unescape_spaces(t);
        const ByteMap& m = byte_map();
        std::string r;
        for (size_t i = 0, len; i < t.size(); i += len) {
          const uint32_t cp = decode_utf8(t, i, len);
          if (cp < m.to_byte.size() && m.to_byte[cp] >= 0)
            r += char(m.to_byte[cp]);
          else
            r.append(t, i, len);  // not a byte character: pass it through
        }
        return r;
      }
      case TokenType::BYTE:
        return byte_piece(id);
      case TokenType::USER_DEFINED:
        return t;
      default:  // CONTROL, UNKNOWN, UNUSED (llama.cpp prints nothing for these in BPE)
        return {};
    }
  }

 private:
  struct Symbol {
    int32_t prev, next;
    uint32_t off, n;  // span of the mapped word; n == 0 once merged into its left neighbour
  };
  struct Bigram {
    int32_t left, right;
    int32_t rank;
    uint32_t size;
  };
  // Lowest rank on top; on ties the leftmost pair.
  struct Worse {
    bool operator()(const Bigram& a, const Bigram& b) const {
      return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    }
  };

  // The word as the merges spell it, one symbol per character.
  std::string symbols(std::string_view word, std::vector<Symbol>& syms) const {
    std::string text;
    auto add = [&](size_t n) {
      const int32_t idx = int32_t(syms.size());
      syms.push_back({idx - 1, idx + 1, uint32_t(text.size()), uint32_t(n)});
    };
    if (pre_.spm_style) {
      for (size_t off = 0; off < word.size();) {
        const size_t n =
            std::min(utf8_len(static_cast<unsigned char>(word[off])), word.size() - off);
        add(n);
        text.append(word, off, n);
        off += n;
      }
    } else {
      const ByteMap& m = byte_map();
      for (char c : word) {
        const std::string& u = m.to_text[static_cast<unsigned char>(c)];
        add(u.size());
        text += u;
      }
    }
    if (!syms.empty()) syms.back().next = -1;
    return text;
  }

  // The whole word's token, where the pre-tokenizer takes one before merging: Llama 3's
  // ignore_merges, and a run of newlines in Gemma 4 (llama.cpp's fix for it).
  int32_t whole_word(std::string_view word) const {
    if (pre_.spm_style)
      return word.find_first_not_of('\n') == std::string_view::npos ? find(word) : -1;
    if (!pre_.ignore_merges) return -1;
    const ByteMap& m = byte_map();
    std::string text;
    for (char c : word) text += m.to_text[static_cast<unsigned char>(c)];
    return find(text);
  }

  void encode_word(std::string_view word, std::vector<int32_t>& out) const {
    if (const int32_t id = whole_word(word); id >= 0) {
      out.push_back(id);
      return;
    }
    std::vector<Symbol> syms;
    const std::string text = symbols(word, syms);
    if (syms.empty()) return;

    std::priority_queue<Bigram, std::vector<Bigram>, Worse> queue;
    std::string key;
    auto try_add = [&](int32_t l, int32_t r) {
      if (l < 0 || r < 0) return;
      key.assign(text, syms[l].off, syms[l].n);
      key += ' ';
      key.append(text, syms[r].off, syms[r].n);
      const auto it = ranks_.find(key);
      if (it == ranks_.end()) return;
      queue.push({l, r, it->second, syms[l].n + syms[r].n});
    };
    for (int32_t i = 1; i < int32_t(syms.size()); ++i) try_add(i - 1, i);

    while (!queue.empty()) {
      const Bigram b = queue.top();
      queue.pop();
      Symbol& l = syms[b.left];
      Symbol& r = syms[b.right];
      if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // stale
      l.n += r.n;
      r.n = 0;
      l.next = r.next;
      if (r.next >= 0) syms[r.next].prev = b.left;
      try_add(l.prev, b.left);
      try_add(b.left, l.next);
    }

    for (int32_t i = 0; i >= 0; i = syms[i].next) {
      const std::string_view s = std::string_view(text).substr(syms[i].off, syms[i].n);
      const int32_t id = find(s);
      if (id >= 0) {
        out.push_back(id);
        continue;
      }
      // A merge result missing from the vocab: fall back to its bytes' tokens (SentencePiece-style)
      // or its characters, then unk; llama.cpp drops what it cannot find.
      if (pre_.spm_style) {
        for (char c : s)
          if (const int32_t bid = byte_token(static_cast<unsigned char>(c)); bid >= 0)
            out.push_back(bid);
        continue;
      }
      for (size_t k = 0, len; k < s.size(); k += len) {
        decode_utf8(s, k, len);
        const int32_t cid = find(s.substr(k, len));
        if (cid >= 0)
          out.push_back(cid);
        else if (vocab_.unk >= 0)
          out.push_back(vocab_.unk);
      }
    }
  }

  const PreTokenizer& pre_;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ranks_;
};

}  // namespace

std::unique_ptr<Tokenizer> make_bpe(Vocab v) {
  return std::make_unique<BpeTokenizer>(std::move(v));
}

}  // namespace sy::text::detail
