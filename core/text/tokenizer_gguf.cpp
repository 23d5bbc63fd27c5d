// Tokenizer::from_gguf: the tokenizer.ggml.* keys into a Vocab, with errors that name the key.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "gguf/gguf.h"
#include "switchyard/common/error.h"
#include "text/pretokenizer.h"
#include "text/tokenizer_impl.h"

namespace sy::text {

namespace {

using gguf::Value;
using gguf::ValueType;

[[noreturn]] void fail(const std::string& m) {
  throw sy::Error(m);
}

bool is_int(ValueType t) {
  switch (t) {
    case ValueType::UINT8:
    case ValueType::INT8:
    case ValueType::UINT16:
    case ValueType::INT16:
    case ValueType::UINT32:
    case ValueType::INT32:
    case ValueType::UINT64:
    case ValueType::INT64:
      return true;
    default:
      return false;
  }
}

bool is_signed(ValueType t) {
  return t == ValueType::INT8 || t == ValueType::INT16 || t == ValueType::INT32 ||
         t == ValueType::INT64;
}

// The array at key, or nullptr when absent; fails when it is not an array of an accepted type.
const Value* array_of(const gguf::File& f, const char* key, bool (*accept)(ValueType),
                      const char* what) {
  const Value* v = f.find(key);
  if (!v) return nullptr;
  if (v->type != ValueType::ARRAY || !accept(v->array_type)) {
    std::string found = gguf::value_type_name(v->type);
    if (v->type == ValueType::ARRAY)
      found += std::string(" of ") + gguf::value_type_name(v->array_type);
    fail(std::string(key) + " must be an array of " + what + " (found " + found + ")");
  }
  return v;
}

void check_length(const char* key, size_t have, size_t n) {
  if (have < n)
    fail(std::string(key) + " has " + std::to_string(have) + " entries for " + std::to_string(n) +
         " tokens");
}

std::vector<std::string> strings(const Value& v) {
  std::vector<std::string> out;
  out.reserve(v.array.size());
  for (const Value& e : v.array) out.push_back(e.s);
  return out;
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const gguf::File& f) {
  const auto model = f.get_string("tokenizer.ggml.model");
  if (!model) fail("tokenizer.ggml.model is missing");
  if (*model == "no_vocab" || *model == "none")
    fail("tokenizer.ggml.model is '" + *model + "': the file has no text vocabulary");
  if (*model != "llama" && *model != "gpt2" && *model != "gemma4")
    fail("tokenizer.ggml.model '" + *model +
         "' is not supported (expected 'llama', 'gpt2' or 'gemma4')");
  const bool bpe = *model != "llama";

  Vocab v;
  v.model = *model;
  v.name = f.get_string("general.name").value_or("");
  // llama.cpp reads the pre-tokenizer for BPE vocabularies only, and refuses a name it lacks;
  // Gemma 4's model implies its own.
  const detail::PreTokenizer* pre = nullptr;
  if (bpe) {
    v.pre = *model == "gemma4" ? "gemma4" : f.get_string("tokenizer.ggml.pre").value_or("");
    pre = &detail::require_pre_tokenizer(v.pre);
  }
  auto is_str = [](ValueType t) { return t == ValueType::STRING; };
  const Value* tokens = array_of(f, "tokenizer.ggml.tokens", is_str, "strings");
  if (!tokens) fail("tokenizer.ggml.tokens is missing");
  if (tokens->array.empty()) fail("tokenizer.ggml.tokens is empty");
  if (tokens->array.size() > size_t(INT32_MAX)) fail("tokenizer.ggml.tokens has too many entries");
  v.tokens = strings(*tokens);
  const size_t n = v.tokens.size();

  auto is_float = [](ValueType t) { return t == ValueType::FLOAT32 || t == ValueType::FLOAT64; };
  if (const Value* s = array_of(f, "tokenizer.ggml.scores", is_float, "floats")) {
    check_length("tokenizer.ggml.scores", s->array.size(), n);
    v.scores.reserve(n);
    for (size_t i = 0; i < n; ++i) v.scores.push_back(float(s->array[i].f));
  }

  if (const Value* t = array_of(f, "tokenizer.ggml.token_type", is_int, "integers")) {
    check_length("tokenizer.ggml.token_type", t->array.size(), n);
    v.types.reserve(n);
    const bool sgn = is_signed(t->array_type);
    for (size_t i = 0; i < n; ++i) {
      const Value& e = t->array[i];
      const int64_t x = sgn ? e.i : int64_t(std::min<uint64_t>(e.u, INT64_MAX));
      if (x < 1 || x > 6)
        fail("tokenizer.ggml.token_type[" + std::to_string(i) + "] is " + std::to_string(x) +
             " (expected 1..6)");
      v.types.push_back(static_cast<TokenType>(x));
    }
  }

  if (bpe) {
    const Value* m = array_of(f, "tokenizer.ggml.merges", is_str, "strings");
    if (!m) fail("tokenizer.ggml.merges is missing (required for model '" + *model + "')");
    if (m->array.empty())
      fail("tokenizer.ggml.merges is empty (required for model '" + *model + "')");
    v.merges = strings(*m);
    for (size_t i = 0; i < v.merges.size(); ++i)
      if (v.merges[i].size() < 2 || v.merges[i].find(' ', 1) == std::string::npos)
        fail("tokenizer.ggml.merges[" + std::to_string(i) + "] '" + v.merges[i] +
             "' is not of the form 'a b'");
  }

  // llama.cpp's defaults for SentencePiece; BPE vocabs name their specials.
  auto special = [&](const char* key, int32_t fallback) -> int32_t {
    const auto id = f.get_int(key);
    if (!id) return fallback < int64_t(n) ? fallback : -1;
    if (*id < 0 || *id >= int64_t(n))
      fail(std::string(key) + " is " + std::to_string(*id) + " but the vocabulary has " +
           std::to_string(n) + " tokens");
    return int32_t(*id);
  };
  v.bos = special("tokenizer.ggml.bos_token_id", bpe ? -1 : 1);
  v.eos = special("tokenizer.ggml.eos_token_id", bpe ? -1 : 2);
  v.unk = special("tokenizer.ggml.unknown_token_id", bpe ? -1 : 0);
  v.pad = special("tokenizer.ggml.padding_token_id", -1);
  v.eot = special("tokenizer.ggml.eot_token_id", -1);
  v.eom = special("tokenizer.ggml.eom_token_id", -1);
  v.add_bos = f.get_bool("tokenizer.ggml.add_bos_token").value_or(bpe ? pre->add_bos : true);
  // llama.cpp overrides a false add_bos_token for Gemma 4 (ggml-org/llama.cpp#21500).
  if (bpe && pre->type == "gemma4") v.add_bos = true;
  v.add_eos = f.get_bool("tokenizer.ggml.add_eos_token").value_or(false);
  // llama.cpp's BPE vocabularies never take a space prefix.
  v.add_space_prefix = !bpe && f.get_bool("tokenizer.ggml.add_space_prefix").value_or(true);
  return create(std::move(v));
}

}  // namespace sy::text
