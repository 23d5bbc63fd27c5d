#include "modelgen/generator.h"

#include <cmath>
#include <stdexcept>

#include "gguf/gguf.h"
#include "model/arch/arch.h"
#include "model/names.h"
#include "modelgen/generator_detail.h"
#include "modelgen/quant_mix.h"
#include "modelgen/tables.h"
#include "switchyard/common/dtype.h"
#include "switchyard/common/error.h"
#include "text/tokenizer.h"

namespace sy::model {
namespace detail {

const dtype::FileType& file_type(const std::string& d) {
  if (const dtype::FileType* f = dtype::find_file_type(d)) return *f;
  throw sy::Error("unknown dtype '" + d + "' (expected " + dtype::file_type_names() + ")");
}

void check_whole_blocks(const dtype::FileType& ft, const std::string& dtype_name,
                        const std::pair<const char*, uint32_t>* dims, size_t n_dims) {
  // A file type of 32-value blocks has no smaller type to fall back to (llama-quantize refuses
  // such rows too); the K-quant types fall back per tensor (QuantMix).
  if (dtype::block_elems(ft.base) != dtype::kQ8Block) return;
  for (size_t i = 0; i < n_dims; ++i)
    if (dims[i].second % dtype::kQ8Block)
      throw sy::Error(dtype_name + " needs " + dims[i].first + " to be a multiple of 32, it is " +
                      std::to_string(dims[i].second));
}

bool is_source_type(const dtype::FileType& ft) {
  return ft.base == SY_DTYPE_F32;
}

void set_file_type(gguf::Writer& w, const dtype::FileType& ft) {
  // A converter's F32 file names its type among the general keys; llama-quantize then copies
  // every key and appends the quantization version and the new type, in that order, last.
  if (!is_source_type(ft)) w.set("general.quantization_version", gguf::Value::of_u32(2));
  w.set("general.file_type", gguf::Value::of_u32(ft.id));
}

void write_vocab(gguf::Writer& w, const ModelShape& s) {
  using gguf::Value;
  if (!s.vocab.empty()) {
    const uint32_t n = vocab_size(s.vocab);
    if (n != s.n_vocab)
      throw sy::Error("n_vocab is " + std::to_string(s.n_vocab) + " but " + s.vocab + " has " +
                      std::to_string(n) + " tokens");
    const auto file = gguf::File::open(s.vocab);
    for (const auto& [key, value] : file->metadata())
      if (key.starts_with("tokenizer.")) w.set(key, value);
    return;
  }
  const text::Vocab vocab = text::byte_level_vocab(static_cast<int32_t>(s.n_vocab));
  std::vector<int32_t> types;
  for (auto t : vocab.types) types.push_back(static_cast<int32_t>(t));
  w.set("tokenizer.ggml.model", Value::of_str("llama"));
  w.set("tokenizer.ggml.tokens", Value::of_str_array(vocab.tokens));
  w.set("tokenizer.ggml.scores", Value::of_f32_array(vocab.scores));
  w.set("tokenizer.ggml.token_type", Value::of_i32_array(types));
  w.set("tokenizer.ggml.bos_token_id", Value::of_u32(vocab.bos));
  w.set("tokenizer.ggml.eos_token_id", Value::of_u32(vocab.eos));
  w.set("tokenizer.ggml.unknown_token_id", Value::of_u32(vocab.unk));
  w.set("tokenizer.ggml.add_bos_token", Value::of_bool(true));
}

}  // namespace detail

uint32_t vocab_size(const std::filesystem::path& path) {
  const auto file = gguf::File::open(path);
  const gguf::Value* tokens = file->find("tokenizer.ggml.tokens");
  if (!tokens || tokens->array.empty())
    throw sy::Error(path.string() + " has no tokenizer.ggml.tokens");
  return static_cast<uint32_t>(tokens->array.size());
}

ModelShape preset_shape(const std::string& name) {
  ModelShape s;
  if (name == "dense-tiny") return s;
  if (name == "dense-small") {
    s.n_vocab = 512;
    s.n_ctx = 2048;
    s.n_embd = 256;
    s.n_layer = 4;
    s.n_ff = 704;
    s.n_head = 8;
    s.n_head_kv = 4;
    return s;
  }
  if (name == "dense-100m") {  // 99.9M parameters
    s.n_vocab = 4096;
    s.n_ctx = 4096;
    s.n_embd = 768;
    s.n_layer = 12;
    s.n_ff = 2816;
    s.n_head = 12;
    s.n_head_kv = 4;
    s.tied_output = true;
    return s;
  }
  if (detail::hybrid_preset(name, s)) return s;
  if (detail::family_preset(name, s)) return s;
  std::string known;
  for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
  throw sy::Error("unknown preset '" + name + "' (known: " + known + ")");
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names = {"dense-tiny", "dense-small", "dense-100m"};
  for (auto& n : detail::hybrid_preset_names()) names.push_back(n);
  for (auto& n : detail::family_preset_names()) names.push_back(n);
  return names;
}

namespace {

// Parameters of the tensors d's table writes: {all, those one token uses}.
std::pair<uint64_t, uint64_t> counted(const ModelDesc& d) {
  CountTable t(d);
  ModelWeights w;
  find_arch(d.arch)->tensors(t, d, w);
  return {t.params, t.active_params};
}

}  // namespace

ModelDesc describe_shape(const ModelShape& s) {
  return detail::describe(s);
}

uint64_t count_params(const ModelShape& s) {
  const ModelDesc d = detail::describe(s);
  return counted(d).first;
}

uint64_t count_active_params(const ModelShape& s) {
  const ModelDesc d = detail::describe(s);
  return counted(d).second;
}

void write_random_model(const ModelShape& s, const std::string& dtype, uint64_t seed,
                        const std::filesystem::path& path, bool pure) {
  const dtype::FileType& ft = detail::file_type(dtype);
  const ModelDesc d = detail::describe(s);
  detail::check_blocks(s, ft, dtype);
  const Arch& arch = *find_arch(d.arch);
  const QuantMix mix(ft, d, pure);
  using gguf::Value;
  gguf::Writer w;
  w.set(names::key(names::Key::general_architecture, ""), Value::of_str(d.arch));
  // Earlier writers named llama files without the architecture; kept so files stay identical.
  const std::string size = std::to_string(counted(d).first / 1000000) + "M";
  // llama.cpp's vocab loader sets Phi-3's special-token attributes when general.name contains
  // "phi3", and needs Phi-3's own tokens for that; the byte vocabulary has none of them.
  const std::string tag = d.arch == "phi3" ? "phi" : d.arch;
  w.set(names::key(names::Key::general_name, ""),
        Value::of_str("switchyard-random-" + (d.arch == "llama" ? size : tag + "-" + size)));
  if (detail::is_source_type(ft)) detail::set_file_type(w, ft);
  KeyWriter keys(w, d.arch);
  write_common_keys(keys, d);
  arch.write_keys(keys, d);
  detail::write_vocab(w, s);
  if (!detail::is_source_type(ft)) detail::set_file_type(w, ft);
  detail::Rng rng{seed};
  WriteTable table(w, rng, mix, d);
  ModelWeights unused;
  arch.tensors(table, d, unused);
  w.write(path);
}

}  // namespace sy::model
