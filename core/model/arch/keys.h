// Reading and writing an architecture's metadata keys by their shared names (model/names.h):
// KeyReader over a loaded file (every error names the file and the key, as llama.cpp's loader
// does), KeyWriter into a file being written (the random-model writer). The keys every
// architecture shares are read and written here once; each family's file adds its own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/metadata_reader.h"
#include "model/model_desc.h"
#include "model/names.h"

namespace sy::gguf {
class Writer;
}

namespace sy::model {

using names::Key;

class KeyReader {
 public:
  KeyReader(const gguf::File& file, std::string arch) : md_(file), arch_(std::move(arch)) {}

  const gguf::File& file() const { return md_.file(); }
  std::string name(Key k) const { return names::key(k, arch_); }
  std::runtime_error fail(const std::string& what) const { return md_.fail(what); }
  bool has(Key k) const;
  // Entries of an array key; 0 when absent or not an array.
  size_t array_size(Key k) const;

  // Without a default a missing key is an error naming it.
  uint32_t u32(Key k, std::optional<uint32_t> def = std::nullopt) const {
    return md_.u32(name(k), def);
  }
  float f32(Key k, std::optional<float> def = std::nullopt) const { return md_.f32(name(k), def); }
  bool boolean(Key k, bool def) const { return md_.boolean(name(k), def); }
  std::string string(Key k, const std::string& def) const { return md_.string(name(k), def); }
  // A scalar, or an array with one entry per layer (llama.cpp's get_key_or_arr); def when absent.
  std::vector<uint32_t> per_layer(Key k, std::vector<uint32_t> def) const {
    const auto n_layer = static_cast<uint32_t>(def.size());
    return md_.per_layer(name(k), n_layer, std::move(def));
  }
  // The one value of `v` over the layers where `which` is true; throws naming the key when two
  // differ (the layers of one kind share their sizes here). 0 when no layer is selected.
  uint32_t uniform(Key k, const std::vector<uint32_t>& v, const std::vector<bool>& which) const;

 private:
  MetadataReader md_;
  std::string arch_;
};

class KeyWriter {
 public:
  KeyWriter(gguf::Writer& w, std::string arch) : w_(w), arch_(std::move(arch)) {}
  void u32(Key k, uint32_t v);
  void f32(Key k, float v);
  void boolean(Key k, bool v);
  void str(Key k, const std::string& v);
  // A per-layer array, as convert_hf_to_gguf writes Python int lists (gguf-py stores INT32).
  void i32_array(Key k, const std::vector<int32_t>& v);
  void bool_array(Key k, const std::vector<int32_t>& v);  // nonzero: true

 private:
  gguf::Writer& w_;
  std::string arch_;
};

// The keys llama.cpp's generic load_hparams reads for every architecture here: sizes, the rms
// epsilon, causal attention (only true), expert counts and groups (at most one group),
// vocab_size against token_embd, and whether the output matrix is tied; rope.scaling.type is
// checked whether or not the arch ropes, as llama.cpp asserts on an unknown one.
void read_common_keys(const KeyReader& k, ModelDesc& d);
// context_length, embedding_length, block_count (and vocab_size) as converters write them.
void write_common_keys(KeyWriter& k, const ModelDesc& d);

// The llama.cpp context's rope settings from the file (llama_context's constructor): the
// scaling type picks linear or YaRN interpolation; YaRN's magnitude correction cancels the one
// ggml applies, then rope.scaling.attn_factor multiplies. n_rot from the caller.
RopeParams read_rope(const KeyReader& k, const ModelDesc& d, uint32_t n_rot, bool neox);
// rope.dimension_count (the head size when absent), which these graphs assert is the head size.
uint32_t read_full_rotation(const KeyReader& k, const ModelDesc& d);

// The YaRN keys only some families read (mistral3): beta_fast / beta_slow, and the log
// multiplier, which changes YaRN's attention factor as llama_context computes it.
void read_yarn_keys(const KeyReader& k, RopeParams& r);

// head_count (scalar or per layer) and head_count_kv over the layers `attn` marks, into d:
// n_head, n_head_kv, and the per-layer arrays (for families whose pattern they encode).
struct HeadCounts {
  std::vector<uint32_t> heads, kv;
};
HeadCounts read_head_counts(const KeyReader& k, ModelDesc& d);
void set_heads(const KeyReader& k, ModelDesc& d, const HeadCounts& h,
               const std::vector<bool>& attn);
// The head size (key_length, default n_embd / n_head; value_length must equal it) and the
// default softmax scale 1 / sqrt(head size), or attention.scale where the family reads it
// (`scale_key`; 0 there means the default).
void read_head_dim(const KeyReader& k, ModelDesc& d, bool scale_key);
// The attention of a family whose every layer attends alike and rotates whole heads: heads,
// head size (no attention.scale key), and RoPE (NEOX or NORM) with n_rot the head size.
void read_dense_attention(const KeyReader& k, ModelDesc& d, bool neox);
// What read_dense_attention reads, as converters write it: head_count, head_count_kv,
// key_length, value_length, rope.dimension_count, rope.freq_base.
void write_dense_attention(KeyWriter& k, const ModelDesc& d);
// Marks the local (sliding-window) layers of d.layers (ModelDesc::set_swa_period) with the
// period sliding_window_pattern gives (a scalar; an array is ignored, as get_key_or_arr into a
// scalar does), else `period`.
void read_swa_period(const KeyReader& k, ModelDesc& d, uint32_t period);
// read_swa_period's twin: sliding_window_pattern, unless d's period is the family's `period`.
void write_swa_period(KeyWriter& k, const ModelDesc& d, uint32_t period);
// rope.freq_base_swa (default `def`), positive.
float read_freq_base_swa(const KeyReader& k, float def);
// feed_forward_length (scalar or per layer) over the layers `which` marks; all must agree.
uint32_t read_n_ff(const KeyReader& k, const ModelDesc& d, const std::vector<bool>& which);

}  // namespace sy::model
