// An architecture is one descriptor, as llama.cpp's src/models/<arch>.cpp: the keys its loader
// reads (and a converter writes), its tensor table, and how one layer runs. Each family lives in
// one file of this folder and is listed once in arch.cpp; the blocks it composes are in
// model/blocks/, the names it uses in model/names.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "model/arch/keys.h"
#include "model/layer_pass.h"
#include "model/model_desc.h"
#include "model/model_weights.h"
#include "model/tensor_table.h"

namespace sy::model {

class Arch {
 public:
  virtual ~Arch() = default;
  virtual std::string_view name() const = 0;
  // The keys llama.cpp's loader reads for the arch after the common ones (read_common_keys),
  // into d: its sizes and layer pattern. Throws naming the key.
  virtual void read_keys(const KeyReader& k, ModelDesc& d) const = 0;
  // The keys a converter writes for d, after the common ones (the random-model writer).
  virtual void write_keys(KeyWriter& k, const ModelDesc& d) const = 0;
  // Every tensor of d's file, in file order, into w.
  virtual void tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w) const = 0;
  // Layer il of a forward pass: p.x {E, T} in place. The default is the pre-norm residual block:
  // x += mixer(norm(x)), then x += ffn(norm(x)) when the layer has an FFN.
  virtual void layer(LayerPass& p, const LayerWeights& w, uint32_t il) const;
  // Before the first layer, after the scaled embeddings (Gemma 4's per-layer inputs).
  virtual void begin(LayerPass& p) const { (void)p; }
  // Scratch floats per token one layer takes at most (the default: its mixer or FFN block).
  virtual uint64_t scratch_per_token(const ModelDesc& d) const;
};

// nullptr for an architecture the decoder does not run.
const Arch* find_arch(std::string_view name);
// "llama, mamba, jamba, ..."
std::string supported_archs();

// The parts families share.
// token_embd, the output norm (`norm`: lfm2 names it token_embd_norm) and an untied output.
void global_tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w,
                    names::Tensor norm = names::Tensor::output_norm);
// The layer's mixer block on xn into out, by its spec.
void run_mixer(LayerPass& p, const LayerWeights& w, const sy_tensor& xn, const sy_tensor& out);
// The layer's FFN (dense or MoE) on xn into out.
void run_ffn(LayerPass& p, const LayerWeights& w, uint32_t il, const sy_tensor& xn,
             const sy_tensor& out);
// x += y, times the residual multiplier when the family has one (Granite).
void residual_add(LayerPass& p, const sy_tensor& y);
// The stream times the layer's output scale (Gemma 4), when it has one.
void scale_output(LayerPass& p, const LayerWeights& w);
// Scratch floats per token of a layer's mixer and of its FFN.
uint64_t mixer_scratch(const ModelDesc& d, Mixer m);
uint64_t ffn_block_scratch(const ModelDesc& d, FfnKind f);
// The ordinals that bind a layer to its KV cache layer, recurrent-state layer and MoE ids.
struct LayerOrdinals {
  uint32_t attn = 0, state = 0, moe = 0;
  void assign(LayerWeights& w);
};
// Every layer's tensors in file order: the layer's spec and ordinals are set, body(L, il) takes
// its tensors, then the layer joins w.
template <class Body>
void layer_tensors(const ModelDesc& d, ModelWeights& w, Body&& body) {
  LayerOrdinals ord;
  for (uint32_t il = 0; il < d.n_layer; ++il) {
    LayerWeights L;
    L.spec = d.layers[il];
    ord.assign(L);
    body(L, il);
    w.layers.push_back(std::move(L));
  }
}
// Layer il's norm `which` {n_embd}.
const sy_tensor* layer_norm(TensorTable& t, const ModelDesc& d, names::Tensor which, uint32_t il);

}  // namespace sy::model
