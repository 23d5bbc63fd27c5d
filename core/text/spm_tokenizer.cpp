// SentencePiece-style ("llama") tokenizer as llama.cpp runs it: escape spaces to "▁", merge the
// best-scoring adjacent pair until none is in the vocab, and spell leftovers as byte tokens.
#include <queue>
#include <stdexcept>

#include "switchyard/common/error.h"
#include "text/tokenizer_impl.h"

namespace sy::text::detail {

namespace {

class SpmTokenizer final : public VocabTokenizer {
 public:
  explicit SpmTokenizer(Vocab v) : VocabTokenizer(std::move(v)) {}

  // A space prefix goes before the text and after every special token, as in llama.cpp.
  void encode_text(std::string_view text, bool after_special,
                   std::vector<int32_t>& out) const override {
    encode_raw(text, vocab_.add_space_prefix && after_special, out);
  }

  std::string piece(int32_t id) const override {
    check_id(id);
    const std::string& t = vocab_.tokens[id];
    switch (type(id)) {
      case TokenType::NORMAL:
        return unescape_spaces(t);
      case TokenType::BYTE:
        return byte_piece(id);
      case TokenType::USER_DEFINED:
        return t;
      default:  // CONTROL, UNKNOWN, UNUSED
        return {};
    }
  }

 private:
  struct Symbol {
    int32_t prev, next;
    uint32_t off, n;  // span of the escaped text; n == 0 once merged into its left neighbour
  };
  struct Bigram {
    int32_t left, right;
    float score;
    uint32_t size;
  };
  // Highest score on top; on ties the leftmost pair.
  struct Worse {
    bool operator()(const Bigram& a, const Bigram& b) const {
      return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
  };

  void encode_raw(std::string_view raw, bool prefix, std::vector<int32_t>& out) const {
    std::string text = prefix ? std::string(kSpaceMark) : std::string();
    text += escape_spaces(raw);

    std::vector<Symbol> syms;
    for (size_t off = 0; off < text.size();) {
      const size_t n = std::min(utf8_len(static_cast<unsigned char>(text[off])), text.size() - off);
      const int32_t idx = int32_t(syms.size());
      syms.push_back({idx - 1, off + n == text.size() ? -1 : idx + 1, uint32_t(off), uint32_t(n)});
      off += n;
    }

    std::priority_queue<Bigram, std::vector<Bigram>, Worse> queue;
    auto try_add = [&](int32_t l, int32_t r) {
      if (l < 0 || r < 0) return;
      const std::string_view s = std::string_view(text).substr(syms[l].off, syms[l].n + syms[r].n);
      const int32_t id = find(s);
      if (id < 0) return;
      queue.push({l, r, score(id), uint32_t(s.size())});
    };
    for (int32_t i = 1; i < int32_t(syms.size()); ++i) try_add(i - 1, i);

    while (!queue.empty()) {
      const Bigram b = queue.top();
      queue.pop();
      Symbol& l = syms[b.left];
      Symbol& r = syms[b.right];
      // Stale: one side was merged away or grew since this pair was queued.
      if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;
      l.n += r.n;
      r.n = 0;
      l.next = r.next;
      if (r.next >= 0) syms[r.next].prev = b.left;
      try_add(l.prev, b.left);
      try_add(b.left, l.next);
    }

    for (int32_t i = syms.empty() ? -1 : 0; i >= 0; i = syms[i].next) {
      const std::string_view s = std::string_view(text).substr(syms[i].off, syms[i].n);
      const int32_t id = find(s);
      if (id >= 0) {
        out.push_back(id);
        continue;
      }
      bool have_bytes = true;
      for (char c : s) have_bytes = have_bytes && byte_token(static_cast<unsigned char>(c)) >= 0;
      if (have_bytes) {
        for (char c : s) out.push_back(byte_token(static_cast<unsigned char>(c)));
      } else if (vocab_.unk >= 0) {
        out.push_back(vocab_.unk);
      } else {
        throw sy::Error(
            "encode: text has a character with no token, no byte token and "
            "the vocabulary has no unknown token");
      }
    }
  }
};

}  // namespace

std::unique_ptr<Tokenizer> make_spm(Vocab v) {
  return std::make_unique<SpmTokenizer>(std::move(v));
}

}  // namespace sy::text::detail
