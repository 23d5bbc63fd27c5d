// The pre-tokenizer table. The patterns are the models' own split regexes (tokenizer.json), in
// the adapted forms llama.cpp runs (case-insensitive groups spelled out, possessive quantifiers
// made greedy); non-ASCII characters are written as \x{..} escapes so that no editor or Unicode
// normalisation can change them.
#include "text/pretokenizer.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>

#include "switchyard/common/error.h"
#include "text/unicode.h"

namespace sy::text::detail {

namespace {

// GPT-2's pattern; llama.cpp's copy omits the final `|\s+`, which changes nothing: a lone
// whitespace character that `\s+(?!\S)` leaves is a piece of its own either way.
constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kContractions =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]))";
// Llama 3 (and Qwen 2 with \p{N} for \p{N}{1,3}).
const std::string kLlama3 = std::string(kContractions) +
                            R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*)"
                            R"(|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kQwen2 = std::string(kContractions) +
                           R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*)"
                           R"(|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen 3.5's: Qwen 2's with combining marks kept in words (\p{M} beside \p{L}).
const std::string kQwen35 =
    std::string(kContractions) +
    R"(|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*)"
    R"(|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Upper/lower-case word shapes by lookahead, as llama.cpp writes GPT-4o's and Tekken's
// \p{Lu}\p{Lt}.. classes (any letter but a-z, any letter but A-Z).
constexpr const char* kUpper = R"(((?=[\p{L}])([^a-z])))";
constexpr const char* kLower = R"(((?=[\p{L}])([^A-Z])))";
const std::string kTekken = std::string(R"([^\r\n\p{L}\p{N}]?)") + kUpper + "*" + kLower +
                            R"(+|[^\r\n\p{L}\p{N}]?)" + kUpper + "+" + kLower +
                            R"(*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// GPT-4o's (o200k) word classes also hold the combining marks (\p{M}), which llama.cpp's
// adaptation drops: with them a Devanagari or Khmer word stays one piece, as Hugging Face's
// tokenizer (what the model was trained on) keeps it.
constexpr const char* kUpperMarks = R"(((?=[\p{L}\p{M}])([^a-z])))";
constexpr const char* kLowerMarks = R"(((?=[\p{L}\p{M}])([^A-Z])))";
const std::string kGpt4o = std::string(R"([^\r\n\p{L}\p{N}]?)") + kUpperMarks + "*" + kLowerMarks +
                           "+" + kContractions + R"(?|[^\r\n\p{L}\p{N}]?)" + kUpperMarks + "+" +
                           kLowerMarks + "*" + kContractions +
                           R"(?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// CJK ideographs (U+4E00..U+9FA5), U+0800..U+4E00 and Hangul as DeepSeek groups them.
constexpr const char* kDeepseekCjk = R"([\x{4E00}-\x{9FA5}\x{0800}-\x{4E00}\x{AC00}-\x{D7FF}]+)";
// DeepSeek LLM's letters: the cased letters of its tokenizer.json, range by range.
const std::string kDeepseekLetters =
    std::string(R"(\s?[)") +
    R"(\x{0041}-\x{005A}\x{0061}-\x{007A}\x{00B5}\x{00C0}-\x{00D6}\x{00D8}-\x{00F6})"
    R"(\x{00F8}-\x{01BA}\x{01BC}-\x{01BF}\x{01C4}-\x{0293}\x{0295}-\x{02AF})"
    R"(\x{0370}-\x{0373}\x{0376}-\x{0377}\x{037B}-\x{037D}\x{037F}\x{0386}\x{0388}-\x{038A})"
    R"(\x{038C}\x{038E}-\x{03A1}\x{03A3}-\x{03F5}\x{03F7}-\x{0481}\x{048A}-\x{052F})"
    R"(\x{0531}-\x{0556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD})"
    R"(\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77})"
    R"(\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45})"
    R"(\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D})"
    R"(\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC})"
    R"(\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4})"
    R"(\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124})"
    R"(\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F})"
    R"(\x{2145}-\x{2149}\x{214E}\x{2183}-\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4})"
    R"(\x{2CEB}-\x{2CEE}\x{2CF2}-\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B})"
    R"(\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF})"
    R"(\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A})"
    R"(\x{10400}-\x{1044F}\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2})"
    R"(\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)";
// BLOOM-style: words up to whitespace or one of . , ! ? … 。 ， 、 । ۔ ، (and the parentheses and
// bar the character class spells out).
constexpr const char* kBloom =
    R"( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{0964}\x{06D4}\x{060C})]+)";

struct Family {
  std::vector<std::string> names;
  std::vector<std::string> patterns;
  bool ignore_merges = false, add_bos = false, nfc = false, spm_style = false;
};

const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      {{"default"}, {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"},
       {kLlama3},
       true,
       true},
      {{"dbrx", "smaug-bpe"}, {kLlama3}},
      {{"deepseek-llm"},
       {R"([\r\n])", kDeepseekLetters,
        R"(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)",
        R"(\s+$)", kDeepseekCjk, R"(\p{N}+)"}},
      {{"deepseek-coder"}, {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kDeepseekCjk, R"(\p{N})"}},
      {{"deepseek-v3"},
       {R"(\p{N}{1,3})", R"([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)",
        R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+)"
        R"(| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {{"falcon"}, {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"},
       {R"(\p{N})", kGpt2}},
      {{"gpt-2", "phi-2", "mpt", "olmo", "jais", "gigachat", "jina-es", "jina-de", "jina-v2-es",
        "jina-v2-de", "exaone4"},
       {kGpt2}},
      // Qwen's tokenizer.json normalises to NFC first, as Hugging Face runs it (what the models
      // were trained on); llama.cpp does not.
      {{"qwen2", "deepseek-r1-qwen"}, {kQwen2}, false, false, true},
      {{"stablelm2", "megrez", "hunyuan", "grok-2", "kormo", "f2llmv2"}, {kQwen2}},
      {{"qwen35"}, {kQwen35}, false, false, true},
      {{"poro-chat", "bloom", "gpt3-finnish"}, {kBloom}},
      {{"viking"}, {kBloom, R"(\p{N})"}},
      {{"tekken"}, {kTekken}, true, true},
      {{"gpt-4o", "llama4"}, {kGpt4o}},
      {{"seed-coder"},
       {std::string(kContractions) +
        R"(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {{"bailingmoe", "bailingmoe2"},
       {R"('(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N})"
        R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)"}},
      // Gemma 4: BPE over the whole text, split only at newline runs (merges hold no newline).
      {{"gemma4"}, {R"([^\n]+|[\n]+)"}, false, true, false, true},
      {{"superbpe"}, {R"(\p{N}+)", R"((?=(\d{3})+(?!\d)))"}},
  };
  return f;
}

}  // namespace

const PreTokenizer* find_pre_tokenizer(std::string_view name) {
  if (name.empty()) name = "default";
  static std::mutex mu;
  static std::map<std::string, PreTokenizer, std::less<>> compiled;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = compiled.find(name); it != compiled.end()) return &it->second;
  for (const Family& f : families()) {
    if (std::find(f.names.begin(), f.names.end(), name) == f.names.end()) continue;
    PreTokenizer p;
    p.type = f.names.front();
    for (const std::string& re : f.patterns) p.patterns.emplace_back(re);
    p.ignore_merges = f.ignore_merges;
    p.add_bos = f.add_bos;
    p.nfc = f.nfc;
    p.spm_style = f.spm_style;
    return &compiled.emplace(std::string(name), std::move(p)).first->second;
  }
  return nullptr;
}

const PreTokenizer& require_pre_tokenizer(std::string_view name) {
  if (const PreTokenizer* p = find_pre_tokenizer(name)) return *p;
  throw sy::Error(SY_ERR_UNSUPPORTED,
                  "tokenizer.ggml.pre: unknown pre-tokenizer type: '" + std::string(name) + "'");
}

std::vector<std::string> pre_tokenizer_names() {
  std::vector<std::string> out;
  for (const Family& f : families()) out.insert(out.end(), f.names.begin(), f.names.end());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> pretokenize(const PreTokenizer& pre, std::string_view text) {
  const std::vector<uint32_t> cps = pre.nfc ? nfc(decode_utf8(text)) : decode_utf8(text);
  std::vector<std::string> words;
  size_t at = 0;
  for (const size_t len : split_by_patterns(cps, pre.patterns)) {
    std::string w;
    for (size_t k = at; k < at + len; ++k) append_utf8(w, cps[k]);
    words.push_back(std::move(w));
    at += len;
  }
  return words;
}

}  // namespace sy::text::detail
