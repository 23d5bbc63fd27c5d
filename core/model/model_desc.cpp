#include "model/model_desc.h"

#include <algorithm>

#include "gguf/gguf.h"
#include "model/arch/arch.h"

namespace sy::model {

uint32_t ModelDesc::n_attn_layers() const {
  return static_cast<uint32_t>(std::count_if(layers.begin(), layers.end(),
                                             [](const LayerSpec& s) { return s.has_attention(); }));
}

uint32_t ModelDesc::n_recurrent_layers() const {
  return static_cast<uint32_t>(std::count_if(layers.begin(), layers.end(),
                                             [](const LayerSpec& s) { return s.has_state(); }));
}

uint32_t ModelDesc::n_moe_layers() const {
  return static_cast<uint32_t>(std::count_if(
      layers.begin(), layers.end(), [](const LayerSpec& s) { return s.ffn == FfnKind::moe; }));
}

std::vector<uint32_t> ModelDesc::kv_widths() const {
  std::vector<uint32_t> w;
  for (uint32_t il = 0; il < layers.size(); ++il)
    if (has_kv(il)) w.push_back(kv_width_at(il));
  return w;
}

std::vector<uint32_t> ModelDesc::kv_windows() const {
  std::vector<uint32_t> w;
  for (uint32_t il = 0; il < layers.size(); ++il)
    if (has_kv(il)) w.push_back(layers[il].swa ? window : 0);
  return w;
}

bool ModelDesc::share_kv(uint32_t n) {
  if (n == 0) return true;
  const uint32_t from = n < n_layer ? n_layer - n : 0;
  if (from < 2 || layers[from - 1].swa || !layers[from - 2].swa) return false;
  kv_shared_from = from;
  return true;
}

void ModelDesc::set_swa_period(uint32_t period) {
  for (uint32_t il = 0; il < layers.size(); ++il)
    layers[il].swa = period == 0 || il % period < period - 1;
}

std::vector<bool> ModelDesc::recurrent() const {
  std::vector<bool> r;
  for (const LayerSpec& s : layers) r.push_back(s.has_state());
  return r;
}

std::vector<bool> ModelDesc::moe() const {
  std::vector<bool> r;
  for (const LayerSpec& s : layers) r.push_back(s.ffn == FfnKind::moe);
  return r;
}

ModelDesc read_model_desc(const gguf::File& f) {
  ModelDesc d;
  d.arch = f.require_string(names::key(names::Key::general_architecture, ""));
  const KeyReader k(f, d.arch);
  const Arch* arch = find_arch(d.arch);
  if (!arch)
    throw k.fail(names::key(names::Key::general_architecture, "") + " '" + d.arch +
                 "' is not supported (supported: " + supported_archs() + ")");
  read_common_keys(k, d);
  arch->read_keys(k, d);
  return d;
}

}  // namespace sy::model
