// Tokenizer plumbing shared by both models: vocab lookups, special-token splitting, the
// end-of-generation set, decode.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "grammar/token_trie.h"
#include "switchyard/common/error.h"
#include "text/tokenizer_impl.h"

namespace sy::text {

using detail::kSpaceMark;

namespace {

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

// Token texts llama.cpp's vocabulary loader recognises by role (llama-vocab.cpp; its TODO says
// converters should write keys instead). A token found by one of them becomes CONTROL, so it is
// plain text unless special tokens are parsed, as in llama.cpp.
// End of turn: when no key names eot, the first of these present is it.
constexpr std::string_view kEndOfTurn[] = {"<|eot_id|>",
                                           "<|im_end|>",
                                           "<|end|>",
                                           "<end_of_turn>",
                                           "<|endoftext|>",
                                           "<|end_of_text|>",
                                           "<EOT>",
                                           "_<EOT>",
                                           "[EOT]",
                                           "<\uFF5Cend\u2581of\u2581sentence\uFF5C>",  // DeepSeek
                                           "<end_of_utterance>"};
constexpr std::string_view kEndOfMessage = "<|eom_id|>";
// Fill-in-the-middle markers: prefix, suffix and middle ones only become CONTROL; pad, repo and
// file-separator ones also end generation.
constexpr std::string_view kFimMarkers[] = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>",    "<\uFF5Cfim\u2581begin\uFF5C>",
    "<PRE>",          "\u2581<PRE>",  "<|code_prefix|>", "<|prefix|>",
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>",    "<\uFF5Cfim\u2581hole\uFF5C>",
    "<SUF>",          "\u2581<SUF>",  "<|code_suffix|>", "<|suffix|>",
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>",    "<\uFF5Cfim\u2581end\uFF5C>",
    "<MID>",          "\u2581<MID>",  "<|code_middle|>", "<|middle|>"};
constexpr std::string_view kFimEnders[] = {
    "<|fim_pad|>",   "<fim-pad>",  "<fim_pad>", "<PAD>",      "[PAD]",       "<|fim_repo|>",
    "<|repo_name|>", "<fim-repo>", "<REPO>",    "<reponame>", "<|file_sep|>"};
// Texts that end generation whatever the keys say.
constexpr std::string_view kEndOfGeneration[] = {"<|eot_id|>",
                                                 "<|im_end|>",
                                                 "<|end|>",
                                                 "<|return|>",
                                                 "<|call|>",
                                                 "<|flush|>",
                                                 "<|calls|>",
                                                 "<end_of_turn>",
                                                 "<|endoftext|>",
                                                 "</s>",
                                                 "<|eom_id|>",
                                                 "<EOT>",
                                                 "_<EOT>",
                                                 "[EOT]",
                                                 "[EOS]",
                                                 "<|end_of_text|>",
                                                 "<end_of_utterance>",
                                                 "<eos>",
                                                 "<turn|>",
                                                 "<|tool_response>",
                                                 "<\uFF5Cend\u2581of\u2581sentence\uFF5C>"};
// gpt-oss's harmony markup, which llama.cpp always renders and always matches.
constexpr std::string_view kHarmonyMarkup[] = {"<|channel|>", "<|message|>", "<|start|>",
                                               "<|constrain|>"};

bool is_c_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

}  // namespace

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos,
                                       bool parse_special) const {
  return encode_with(text, add_bos, parse_special, nullptr);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos,
                                       const std::vector<TextSpan>& trusted) const {
  return encode_with(text, add_bos, false, &trusted);
}

std::vector<int32_t> tokenize(const Tokenizer& tokenizer, std::string_view text,
                              TokenizeOptions options) {
  std::vector<int32_t> ids = tokenizer.encode(text, options.bos, options.parse_special);
  if (options.eos) {
    if (tokenizer.vocab().eos < 0) throw sy::Error("add_eos: the vocabulary has no EOS token");
    ids.push_back(tokenizer.vocab().eos);
  }
  return ids;
}

std::unique_ptr<Tokenizer> Tokenizer::create(Vocab vocab) {
  detail::validate(vocab);
  if (vocab.model != "llama") return detail::make_bpe(std::move(vocab));
  return detail::make_spm(std::move(vocab));
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool render_special) const {
  Detokenizer d(*this, vocab_.model == "llama" && vocab_.add_space_prefix, render_special);
  std::string out;
  for (int32_t id : ids) out += d.push(id);
  out += d.finish();
  return out;
}

Detokenizer::Detokenizer(const Tokenizer& tokenizer, bool strip_space_prefix, bool render_special)
    : tok_(tokenizer),
      spm_(tokenizer.vocab().model == "llama"),
      strip_(strip_space_prefix),
      special_(render_special) {}

std::string Detokenizer::push(int32_t id) {
  std::string p = tok_.piece(id);
  const auto& types = tok_.vocab().types;
  if (special_ && !types.empty() &&
      (types[id] == TokenType::CONTROL || types[id] == TokenType::UNKNOWN))
    p = tok_.vocab().tokens[id];
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
  pending_ += detail::unescape_spaces(run);
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

std::string escape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == ' ')
      out += kSpaceMark;
    else
      out += c;
  }
  return out;
}

std::string unescape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.substr(i, 3) == kSpaceMark) {
      out += ' ';
      i += 3;
    } else {
      out += text[i++];
    }
  }
  return out;
}

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

VocabTokenizer::VocabTokenizer(Vocab v) : Tokenizer(std::move(v)) {
  const auto& toks = vocab_.tokens;
  ids_.reserve(toks.size());
  // Later duplicates win, as in llama.cpp's token_to_id.
  for (size_t i = 0; i < toks.size(); ++i) ids_.insert_or_assign(toks[i], int32_t(i));
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    byte_ids_[b] = find(buf);
  }
  settle_special_tokens();
  for (size_t i = 0; i < vocab_.types.size(); ++i) {
    const TokenType t = vocab_.types[i];
    if ((t == TokenType::USER_DEFINED || t == TokenType::CONTROL || t == TokenType::UNKNOWN) &&
        !toks[i].empty())
      specials_.push_back(int32_t(i));
  }
  std::stable_sort(specials_.begin(), specials_.end(),
                   [&](int32_t a, int32_t b) { return toks[a].size() > toks[b].size(); });
  // llama.cpp sets rstrip on every special token of a model named phi-3 (but <unk>, <s> and
  // <|endoftext|>) and on </s>: whitespace after them is dropped.
  std::string name = vocab_.name;
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
    rstrip_.assign(toks.size(), 0);
    for (int32_t id : specials_) rstrip_[id] = 1;
    if (const int32_t id = find("</s>"); id >= 0) rstrip_[id] = 1;
    for (const char* t : {"<unk>", "<s>", "<|endoftext|>"})
      if (const int32_t id = find(t); id >= 0) rstrip_[id] = 0;
  }
}

void VocabTokenizer::settle_special_tokens() {
  auto set_type = [&](int32_t id, TokenType t) {
    if (vocab_.types.empty()) vocab_.types.assign(vocab_.tokens.size(), TokenType::NORMAL);
    vocab_.types[id] = t;
  };
  std::vector<int32_t> eog;
  auto mark = [&](std::string_view text, bool ends) {
    const int32_t id = find(text);
    if (id < 0) return id;
    set_type(id, TokenType::CONTROL);
    if (ends) eog.push_back(id);
    return id;
  };
  for (std::string_view text : kEndOfTurn)
    if (const int32_t id = mark(text, false); id >= 0 && vocab_.eot < 0) vocab_.eot = id;
  if (const int32_t id = mark(kEndOfMessage, false); id >= 0 && vocab_.eom < 0) vocab_.eom = id;
  for (std::string_view text : kFimMarkers) mark(text, false);
  for (std::string_view text : kFimEnders) mark(text, true);
  for (std::string_view text : kEndOfGeneration) mark(text, true);
  for (int32_t id : {vocab_.eos, vocab_.eot, vocab_.eom})
    if (id >= 0) eog.push_back(id);
  for (std::string_view text : kHarmonyMarkup)
    if (const int32_t id = find(text); id >= 0) set_type(id, TokenType::USER_DEFINED);
  std::sort(eog.begin(), eog.end());
  eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
  auto ends = [&](std::string_view text) {
    const int32_t id = find(text);
    return id >= 0 && std::binary_search(eog.begin(), eog.end(), id) ? id : -1;
  };
  // Harmony (gpt-oss) and Solar Open end a turn with <|return|> or <|call|>; their <|end|> only
  // closes a message inside one, so it is ordinary markup there.
  if (const int32_t end = ends("<|end|>");
      end >= 0 && ((ends("<|return|>") >= 0 && ends("<|call|>") >= 0) ||
                   (ends("<|calls|>") >= 0 && ends("<|flush|>") >= 0))) {
    eog.erase(std::find(eog.begin(), eog.end(), end));
    set_type(end, TokenType::USER_DEFINED);
  }
  // Gemma 4 writes </s> inside tool responses.
  if (const int32_t s = ends("</s>"); s >= 0 && ends("<|tool_response>") >= 0) {
    eog.erase(std::find(eog.begin(), eog.end(), s));
    set_type(s, TokenType::NORMAL);
  }
  eog_ = std::move(eog);
}

int32_t VocabTokenizer::find(std::string_view text) const {
  const auto it = ids_.find(text);
  return it == ids_.end() ? -1 : it->second;
}

TokenType VocabTokenizer::type(int32_t id) const {
  return vocab_.types.empty() ? TokenType::NORMAL : vocab_.types[id];
}

std::string VocabTokenizer::byte_piece(int32_t id) const {
  const std::string& t = vocab_.tokens[id];
  if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>') {
    const int hi = hex_digit(t[3]), lo = hex_digit(t[4]);
    if (hi >= 0 && lo >= 0) return std::string(1, char(hi * 16 + lo));
  }
  return t;
}

float VocabTokenizer::score(int32_t id) const {
  return vocab_.scores.empty() ? 0.0f : vocab_.scores[id];
}

void VocabTokenizer::check_id(int32_t id) const {
  if (id < 0 || id >= n_vocab())
    throw sy::Error("token id " + std::to_string(id) + " is out of range (" +
                    std::to_string(n_vocab()) + " tokens)");
}

void VocabTokenizer::push_bos(std::vector<int32_t>& out) const {
  if (vocab_.bos < 0) throw sy::Error("add_bos: the vocabulary has no BOS token");
  out.push_back(vocab_.bos);
}

std::vector<int32_t> VocabTokenizer::encode_with(std::string_view text, bool add_bos,
                                                 bool parse_special,
                                                 const std::vector<TextSpan>* trusted) const {
  std::vector<int32_t> out;
  if (add_bos) push_bos(out);
  if (text.empty()) return out;
  bool after_special = true;
  for (const Fragment& f : split_specials(text, parse_special, trusted)) {
    if (f.token >= 0) {
      out.push_back(f.token);
      after_special = true;
    } else {
      encode_text(f.text, after_special, out);
      after_special = false;
    }
  }
  return out;
}

std::vector<Fragment> VocabTokenizer::split_specials(std::string_view text, bool parse_special,
                                                     const std::vector<TextSpan>* trusted) const {
  auto inside_trusted = [&](size_t b, size_t e) {
    for (const TextSpan& s : *trusted)
      if (b >= s.begin && e <= s.end) return true;
    return false;
  };
  std::vector<Fragment> frags{{text, -1}}, next;
  for (int32_t id : specials_) {
    const bool user_defined = type(id) == TokenType::USER_DEFINED;
    if (!user_defined && !parse_special && !trusted) continue;
    const bool check_span = !user_defined && !parse_special;
    const bool rstrip = !rstrip_.empty() && rstrip_[id];
    const std::string_view t = vocab_.tokens[id];
    next.clear();
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      const std::string_view ft = f.text;
      const size_t base = size_t(ft.data() - text.data());
      size_t from = 0, search = 0;
      for (size_t m; (m = ft.find(t, search)) != std::string_view::npos;) {
        if (check_span && !inside_trusted(base + m, base + m + t.size())) {
          search = m + 1;
          continue;
        }
        if (m > from) next.push_back({ft.substr(from, m - from), -1});
        next.push_back({ft.substr(m, t.size()), id});
        from = m + t.size();
        if (rstrip)
          while (from < ft.size() && is_c_space(ft[from])) ++from;
        search = from;
      }
      if (from < ft.size()) next.push_back({ft.substr(from), -1});
    }
    frags.swap(next);
  }
  return frags;
}

}  // namespace detail

std::shared_ptr<const grammar::TokenTrie> Tokenizer::token_trie() const {
  std::call_once(trie_once_, [this] {
    std::vector<std::string> bytes(static_cast<size_t>(n_vocab()));
    for (int32_t id = 0; id < n_vocab(); ++id)
      if (!std::binary_search(eog_.begin(), eog_.end(), id)) bytes[size_t(id)] = piece(id);
    trie_ = std::make_shared<const grammar::TokenTrie>(std::move(bytes));
  });
  return trie_;
}

}  // namespace sy::text
