#include "model/arch/gemma_layer.h"

namespace sy::model {

using names::Tensor;

void gemma_layer_tensors(TensorTable& t, const ModelDesc& d, ModelWeights& w, bool qk_norm) {
  global_tensors(t, d, w);
  AttentionRules attn;
  attn.qkv = {Take::applied, true};  // build_qkv: optional biases and scales
  attn.out = {Take::no, true};
  attn.qk_norm = qk_norm;
  const LinearRules ffn{Take::no, false};  // build_ffn gets no biases or scales here
  layer_tensors(d, w, [&](LayerWeights& L, uint32_t il) {
    L.attn_norm = layer_norm(t, d, Tensor::attn_norm, il);
    attention_tensors(t, d, il, attn, L.attn);
    L.attn_post_norm = layer_norm(t, d, Tensor::post_attention_norm, il);
    L.ffn_norm = layer_norm(t, d, Tensor::ffn_norm, il);
    ffn_tensors(t, d, il, d.n_ff, ffn, true, L.ffn);
    L.ffn_post_norm = layer_norm(t, d, Tensor::post_ffw_norm, il);
  });
}

}  // namespace sy::model
