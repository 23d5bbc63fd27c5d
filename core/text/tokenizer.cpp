// Tokenizer plumbing shared by both models: vocab lookups, USER_DEFINED splitting, decode.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "text/tokenizer_impl.h"

namespace sy::text {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// Length of the longest prefix of s that does not end inside a UTF-8 sequence. Invalid bytes count
// as complete, so nothing is held back forever.
size_t complete_utf8_prefix(const std::string& s) {
  const size_t n = s.size();
  for (size_t k = 1; k <= 3 && k <= n; ++k) {
    const auto c = static_cast<unsigned char>(s[n - k]);
    if ((c & 0xC0) == 0x80) continue;
    const size_t need = c >= 0xF8 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > k ? n - k : n;
  }
  return n;
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::create(Vocab vocab) {
  detail::validate(vocab);
  if (vocab.model == "gpt2") return detail::make_bpe(std::move(vocab));
  return detail::make_spm(std::move(vocab));
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  Detokenizer d(*this, vocab_.model == "llama" && vocab_.add_space_prefix);
  std::string out;
  for (int32_t id : ids) out += d.push(id);
  out += d.finish();
  return out;
}

Detokenizer::Detokenizer(const Tokenizer& tokenizer, bool strip_space_prefix)
    : tok_(tokenizer), spm_(tokenizer.vocab().model == "llama"), strip_(strip_space_prefix) {}

std::string Detokenizer::push(int32_t id) {
  std::string p = tok_.piece(id);
  const auto& types = tok_.vocab().types;
  if (spm_ && !types.empty() && types[id] == TokenType::BYTE) {
    bytes_ += p;
    flush_bytes(false);
  } else {
    flush_bytes(true);
    pending_ += p;
  }
  return take_complete();
}

std::string Detokenizer::finish() {
  flush_bytes(true);
  std::string out = std::move(pending_);
  pending_.clear();
  if (strip_ && !out.empty()) {
    if (out[0] == ' ') out.erase(0, 1);
    strip_ = false;
  }
  return out;
}

// Byte fallback spells an escaped space as the three bytes of "▁"; only the whole run shows it.
void Detokenizer::flush_bytes(bool all) {
  size_t keep = 0;
  if (!all) {
    for (size_t k = std::min<size_t>(2, bytes_.size()); k > 0; --k)
      if (std::string_view(bytes_).substr(bytes_.size() - k) == kSpaceMark.substr(0, k)) {
        keep = k;
        break;
      }
  }
  const std::string_view run = std::string_view(bytes_).substr(0, bytes_.size() - keep);
  for (size_t i = 0; i < run.size();) {
    if (run.substr(i, 3) == kSpaceMark) {
      pending_ += ' ';
      i += 3;
    } else {
      pending_ += run[i++];
    }
  }
  bytes_.erase(0, run.size());
}

std::string Detokenizer::take_complete() {
  const size_t cut = complete_utf8_prefix(pending_);
  std::string out = pending_.substr(0, cut);
  pending_.erase(0, cut);
  if (strip_ && !out.empty()) {
    if (out[0] == ' ') out.erase(0, 1);
    strip_ = false;
  }
  return out;
}

namespace detail {

VocabTokenizer::VocabTokenizer(Vocab v) : Tokenizer(std::move(v)) {
  const auto& toks = vocab_.tokens;
  ids_.reserve(toks.size());
  // Later duplicates win, as in llama.cpp's token_to_id.
  for (size_t i = 0; i < toks.size(); ++i) ids_.insert_or_assign(toks[i], int32_t(i));
  for (size_t i = 0; i < vocab_.types.size(); ++i)
    if (vocab_.types[i] == TokenType::USER_DEFINED && !toks[i].empty())
      user_defined_.push_back(int32_t(i));
  std::stable_sort(user_defined_.begin(), user_defined_.end(),
                   [&](int32_t a, int32_t b) { return toks[a].size() > toks[b].size(); });
}

int32_t VocabTokenizer::find(std::string_view text) const {
  const auto it = ids_.find(text);
  return it == ids_.end() ? -1 : it->second;
}

TokenType VocabTokenizer::type(int32_t id) const {
  return vocab_.types.empty() ? TokenType::NORMAL : vocab_.types[id];
}

float VocabTokenizer::score(int32_t id) const {
  return vocab_.scores.empty() ? 0.0f : vocab_.scores[id];
}

void VocabTokenizer::check_id(int32_t id) const {
  if (id < 0 || id >= n_vocab())
    throw std::out_of_range("token id " + std::to_string(id) + " is out of range (" +
                            std::to_string(n_vocab()) + " tokens)");
}

void VocabTokenizer::push_bos(std::vector<int32_t>& out) const {
  if (vocab_.bos < 0) throw std::runtime_error("add_bos: the vocabulary has no BOS token");
  out.push_back(vocab_.bos);
}

std::vector<Fragment> VocabTokenizer::split_user_defined(std::string_view text) const {
  std::vector<Fragment> frags{{text, -1}}, next;
  for (int32_t id : user_defined_) {
    const std::string_view t = vocab_.tokens[id];
    next.clear();
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      size_t pos = 0;
      for (size_t m; (m = f.text.find(t, pos)) != std::string_view::npos; pos = m + t.size()) {
        if (m > pos) next.push_back({f.text.substr(pos, m - pos), -1});
        next.push_back({f.text.substr(m, t.size()), id});
      }
      if (pos < f.text.size()) next.push_back({f.text.substr(pos), -1});
    }
    frags.swap(next);
  }
  return frags;
}

}  // namespace detail
}  // namespace sy::text
