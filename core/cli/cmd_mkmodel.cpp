// switchyard mkmodel: write a random-weight GGUF of any architecture the decoder runs, from a
// preset, TOML or flag-given shape.
#include <cstdio>
#include <filesystem>
#include <optional>

#include "cli/commands.h"
#include "cli/options.h"
#include "config/config.h"
#include "modelgen/generator.h"
#include "modelgen/shape_file.h"
#include "switchyard/common/file_type.h"

namespace sy::cli {

int cmd_mkmodel(int argc, char** argv) {
  std::string presets;
  for (const auto& p : model::preset_names()) presets += " " + p;
  Command app("mkmodel",
              "Writes a random-weight GGUF model, deterministic from the seed.\n"
              "presets:" +
                  presets +
                  "\n"
                  "dtypes (llama-quantize's file types and per-tensor mixes): " +
                  dtype::file_type_names());
  std::string out, preset = "dense-tiny", shape_file, dtype = "f32";
  uint64_t seed = 1;
  app.add_option("--out", out, "the GGUF file to write")->required();
  app.add_option("--preset", preset, "named shape (the base of --shape too)");
  app.add_option("--shape", shape_file, "TOML shape: preset, arch and any ModelShape field");
  app.add_option("--dtype", dtype, "file type of the matrices");
  app.add_option("--seed", seed, "weights' random seed");
  bool pure = false;
  app.add_flag("--pure", pure,
               "llama-quantize's --pure: every quantized matrix (output and embedding too) in "
               "the file type's base type");
  // Shape fields over the preset or shape file, each in [1, 2^24].
  std::optional<uint32_t> n_vocab, n_ctx, n_embd, n_layer, n_ff, n_head, n_head_kv;
  const auto field = CLI::Range(uint32_t{1}, uint32_t{1} << 24);
  app.add_option("--n-vocab", n_vocab, "vocabulary size")->check(field);
  std::string vocab;
  app.add_option("--vocab", vocab,
                 "a GGUF file whose tokenizer the model takes (e.g. llama.cpp's "
                 "ggml-vocab-llama-bpe.gguf); the vocabulary size is its token count")
      ->check(CLI::ExistingFile);
  app.add_option("--n-ctx", n_ctx, "context length")->check(field);
  app.add_option("--n-embd", n_embd, "embedding width")->check(field);
  app.add_option("--n-layer", n_layer, "layers")->check(field);
  app.add_option("--n-ff", n_ff, "feed-forward width")->check(field);
  app.add_option("--n-head", n_head, "attention heads")->check(field);
  app.add_option("--n-head-kv", n_head_kv, "KV heads")->check(field);
  bool tied = false;
  app.add_flag("--tied", tied, "tie the output matrix to the embedding");
  double scale = 1.0;
  app.add_option("--scale", scale,
                 "widths and head counts times this, in (0, 1]: a real shape at a size that runs "
                 "here (layers, experts and vocabulary kept)")
      ->check(CLI::Range(1e-6, 1.0));
  if (!parse(app, argc, argv)) return 0;

  model::ModelShape s =
      shape_file.empty() ? model::preset_shape(preset) : load_shape(shape_file, preset);
  for (auto [opt, field_of] :
       {std::pair{&n_vocab, &s.n_vocab}, std::pair{&n_ctx, &s.n_ctx}, std::pair{&n_embd, &s.n_embd},
        std::pair{&n_layer, &s.n_layer}, std::pair{&n_ff, &s.n_ff}, std::pair{&n_head, &s.n_head},
        std::pair{&n_head_kv, &s.n_head_kv}})
    *field_of = opt->value_or(*field_of);
  if (tied) s.tied_output = true;
  if (!vocab.empty()) {
    s.vocab = vocab;
    if (!n_vocab) s.n_vocab = model::vocab_size(vocab);
  }
  s = model::scale_shape(s, scale);
  const std::filesystem::path out_path = out;
  if (out_path.has_parent_path()) std::filesystem::create_directories(out_path.parent_path());
  model::write_random_model(s, dtype, seed, out_path, pure);
  std::printf(
      "wrote %s: %s, %.1fM parameters (%.1fM active), %s, n_embd %u, n_layer %u, n_ff %u, heads "
      "%u/%u, vocab %u, ctx %u\n",
      out.c_str(), s.arch.c_str(), model::count_params(s) / 1e6,
      model::count_active_params(s) / 1e6, (dtype + (pure ? " pure" : "")).c_str(), s.n_embd,
      s.n_layer, s.n_ff, s.n_head, s.n_head_kv, s.n_vocab, s.n_ctx);
  return 0;
}

}  // namespace sy::cli
