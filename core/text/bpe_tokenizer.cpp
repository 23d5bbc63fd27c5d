// GPT-2 byte-level BPE ("gpt2") as llama.cpp runs it for the default pre-tokenizer: split with the
// GPT-2 pattern, map bytes to printable characters, merge adjacent pairs by lowest merge rank.
#include <array>
#include <cstdint>
#include <queue>

#include "text/tokenizer_impl.h"

namespace sy::text::detail {

namespace {

void append_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += char(cp);
  } else {  // the byte map only reaches U+0143
    s += char(0xC0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3F));
  }
}

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

// Decodes one UTF-8 character at s[i]; an invalid sequence yields its first byte alone as len 1
// with cp = UINT32_MAX.
uint32_t next_cp(std::string_view s, size_t i, size_t& len) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) {
    len = 1;
    return UINT32_MAX;
  }
  uint32_t cp = n == 1 ? c : c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) {
      len = 1;
      return UINT32_MAX;
    }
    cp = (cp << 6) | (d & 0x3F);
  }
  len = n;
  return cp;
}

enum class Cls { letter, number, space, other, end };

// ASCII classes exactly; every byte >= 0x80 counts as a letter (no Unicode tables here).
Cls cls_at(std::string_view s, size_t i) {
  if (i >= s.size()) return Cls::end;
  const auto c = static_cast<unsigned char>(s[i]);
  if (c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return Cls::letter;
  if (c >= '0' && c <= '9') return Cls::number;
  if (c == ' ' || (c >= 0x09 && c <= 0x0D)) return Cls::space;
  return Cls::other;
}

}  // namespace

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
std::vector<std::string_view> gpt2_pretokenize(std::string_view s) {
  std::vector<std::string_view> words;
  size_t start = 0, pos = 0;
  auto cut = [&](size_t end) {
    words.push_back(s.substr(start, end - start));
    start = pos = end;
  };
  auto ch = [&](size_t i) { return i < s.size() ? s[i] : '\0'; };
  while (pos < s.size()) {
    if (s[pos] == '\'' && pos + 1 < s.size()) {
      const char a = ch(pos + 1), b = ch(pos + 2);
      if (a == 's' || a == 't' || a == 'm' || a == 'd') {
        cut(pos + 2);
        continue;
      }
      if (pos + 2 < s.size() &&
          ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))) {
        cut(pos + 3);
        continue;
      }
    }
    const size_t p2 = s[pos] == ' ' ? pos + 1 : pos;  // the optional leading space
    const Cls c2 = cls_at(s, p2);
    if (c2 == Cls::letter || c2 == Cls::number || c2 == Cls::other) {
      size_t e = p2;
      while (cls_at(s, e) == c2) ++e;
      cut(e);
      continue;
    }
    size_t nsp = 0;
    while (cls_at(s, pos + nsp) == Cls::space) ++nsp;
    if (nsp > 1 && pos + nsp < s.size()) {
      cut(pos + nsp - 1);  // \s+(?!\S): leave the last space to lead the next word
      continue;
    }
    cut(pos + (nsp > 0 ? nsp : 1));
  }
  return words;
}

namespace {

class BpeTokenizer final : public VocabTokenizer {
 public:
  explicit BpeTokenizer(Vocab v) : VocabTokenizer(std::move(v)) {
    ranks_.reserve(vocab_.merges.size());
    // The first occurrence of a pair keeps its rank.
    for (size_t i = 0; i < vocab_.merges.size(); ++i) ranks_.emplace(vocab_.merges[i], int32_t(i));
  }

  std::vector<int32_t> encode(std::string_view text, bool add_bos) const override {
    std::vector<int32_t> out;
    if (add_bos) push_bos(out);
    for (const Fragment& f : split_user_defined(text)) {
      if (f.token >= 0) {
        out.push_back(f.token);
        continue;
      }
      for (std::string_view w : gpt2_pretokenize(f.text)) encode_word(w, out);
    }
    return out;
  }

  std::string piece(int32_t id) const override {
    check_id(id);
    const std::string& t = vocab_.tokens[id];
    switch (type(id)) {
      case TokenType::NORMAL: {
        const ByteMap& m = byte_map();
        std::string r;
        for (size_t i = 0, len; i < t.size(); i += len) {
          const uint32_t cp = next_cp(t, i, len);
          if (cp < m.to_byte.size() && m.to_byte[cp] >= 0)
            r += char(m.to_byte[cp]);
          else
            r.append(t, i, len);  // not a byte character: pass it through
        }
        return r;
      }
      case TokenType::USER_DEFINED:
        return t;
      default:  // CONTROL, UNKNOWN, UNUSED, BYTE (llama.cpp prints nothing for these in BPE)
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

  void encode_word(std::string_view word, std::vector<int32_t>& out) const {
    const ByteMap& m = byte_map();
    std::string text;
    std::vector<Symbol> syms;
    for (char c : word) {
      const std::string& u = m.to_text[static_cast<unsigned char>(c)];
      const int32_t idx = int32_t(syms.size());
      syms.push_back({idx - 1, idx + 1, uint32_t(text.size()), uint32_t(u.size())});
      text += u;
    }
    if (syms.empty()) return;
    syms.back().next = -1;

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
      // A merge result missing from the vocab: fall back to its characters, then unk; llama.cpp
      // drops what it cannot find.
      for (size_t k = 0, len; k < s.size(); k += len) {
        next_cp(s, k, len);
        const int32_t cid = find(s.substr(k, len));
        if (cid >= 0)
          out.push_back(cid);
        else if (vocab_.unk >= 0)
          out.push_back(vocab_.unk);
      }
    }
  }

  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> ranks_;
};

}  // namespace

std::unique_ptr<Tokenizer> make_bpe(Vocab v) {
  return std::make_unique<BpeTokenizer>(std::move(v));
}

}  // namespace sy::text::detail
