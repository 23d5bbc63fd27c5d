// switchyard mkmodel: write a random-weight llama GGUF of a preset, TOML or flag-given shape.
#include <cstdio>
#include <filesystem>

#include "cli/args.h"
#include "cli/commands.h"
#include "config/config.h"
#include "model/generator.h"
#include "switchyard/common/file_type.h"

namespace sy::cli {

int cmd_mkmodel(int argc, char** argv) {
  Args a(argc, argv, 2,
         {"out", "preset", "shape", "dtype", "seed", "n-vocab", "n-ctx", "n-embd", "n-layer", "n-ff",
          "n-head", "n-head-kv"},
         {"tied", "help"});
  if (a.has("help") || !a.has("out")) {
    std::string presets;
    for (const auto& p : model::preset_names()) presets += " " + p;
    std::printf(
        "usage: switchyard mkmodel --out F.gguf [--preset P] [--shape S.toml] [--dtype T]\n"
        "                          [--seed N] [--n-vocab N --n-ctx N --n-embd N --n-layer N --n-ff "
        "N\n"
        "                           --n-head N --n-head-kv N --tied]\n"
        "presets:%s (default dense-tiny)\n"
        "dtypes (llama-quantize's file types and per-tensor mixes, default f32): %s\n",
        presets.c_str(), dtype::file_type_names().c_str());
    if (!a.has("out") && !a.has("help")) throw UsageError("--out is required");
    return 0;
  }
  const std::string preset = a.str("preset", "dense-tiny");
  model::ModelShape s = a.has("shape") ? load_shape(a.str("shape"), preset) : model::preset_shape(preset);
  auto u32 = [&](const char* k, uint32_t& v) {
    const int64_t x = a.integer(k, v);
    if (x < 1 || x > (int64_t(1) << 24)) throw UsageError(std::string("--") + k + " must be in [1, 2^24]");
    v = static_cast<uint32_t>(x);
  };
  u32("n-vocab", s.n_vocab);
  u32("n-ctx", s.n_ctx);
  u32("n-embd", s.n_embd);
  u32("n-layer", s.n_layer);
  u32("n-ff", s.n_ff);
  u32("n-head", s.n_head);
  u32("n-head-kv", s.n_head_kv);
  if (a.has("tied")) s.tied_output = true;
  const std::string dtype = a.str("dtype", "f32");
  const uint64_t seed = static_cast<uint64_t>(a.integer("seed", 1));
  const std::filesystem::path out = a.str("out");
  if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
  model::write_random_model(s, dtype, seed, out);
  std::printf(
      "wrote %s: %s, %.1fM parameters (%.1fM active), %s, n_embd %u, n_layer %u, n_ff %u, heads "
      "%u/%u, vocab %u, ctx %u\n",
      a.str("out").c_str(), s.arch.c_str(), model::count_params(s) / 1e6,
      model::count_active_params(s) / 1e6, dtype.c_str(), s.n_embd, s.n_layer, s.n_ff, s.n_head,
      s.n_head_kv, s.n_vocab, s.n_ctx);
  return 0;
}

}  // namespace sy::cli
