// switchyard eval: one token sequence through a model, with llama.cpp's tool conventions: the
// whole prompt in one batch, every position's logits as raw little-endian float32 rows
// (n_prompt rows of n_vocab, the format of ../shared/ggml-reference), and a greedy continuation.
#include <bit>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "cli/options.h"
#include "gguf/gguf.h"
#include "host/backend.h"
#include "host/plugin_host.h"
#include "model/evaluate.h"
#include "model/model.h"
#include "switchyard/common/error.h"

namespace sy::cli {
namespace {

std::vector<int32_t> parse_tokens(const std::string& s) {
  std::vector<int32_t> ids;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(item, &used);
    } catch (...) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v < 0 || v > INT32_MAX)
      throw UsageError("--tokens: '" + item + "' is not a token id");
    ids.push_back(static_cast<int32_t>(v));
  }
  if (ids.empty()) throw UsageError("--tokens: no token ids");
  return ids;
}

void write_logits(const std::string& path, const std::vector<float>& logits) {
  static_assert(std::endian::native == std::endian::little, "raw float32 rows are little-endian");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(logits.data()),
            static_cast<std::streamsize>(logits.size() * sizeof(float)));
  if (!out) throw sy::Error(SY_ERR_UNAVAILABLE, "cannot write " + path);
}

}  // namespace

int cmd_eval(int argc, char** argv) {
  Command app("eval", "Runs the tokens through the model in one batch and prints what came out.");
  std::string model_path, tokens_text, backend_name = "cpu_onednn", logits_out, plugin_dir;
  uint32_t n_greedy = 0;
  app.add_option("model", model_path, "the GGUF file");
  app.add_option("--tokens", tokens_text, "token ids, comma separated (ID,ID,...)")->required();
  app.add_option("--backend", backend_name, "backend plugin: name or path");
  app.add_option("--logits-out", logits_out,
                 "write every position's logits as raw little-endian float32, n_tokens rows of "
                 "n_vocab");
  app.add_option("--greedy", n_greedy,
                 "then decode N tokens greedily and print `greedy: id id ...`")
      ->check(CLI::Range(0, 65536));
  app.add_option("--plugin-dir", plugin_dir, "searched before the default plugin folders");
  if (!parse(app, argc, argv)) return 0;
  if (model_path.empty()) throw UsageError("expected one GGUF file\n" + app.help());
  const std::vector<int32_t> tokens = parse_tokens(tokens_text);

  std::vector<std::filesystem::path> dirs;
  if (!plugin_dir.empty()) dirs.push_back(plugin_dir);
  for (auto& d : PluginHost::default_dirs()) dirs.push_back(d);
  const PluginHost host(dirs);
  Backend backend(host.load(SY_PLUGIN_BACKEND, backend_name), Params{});
  if (!backend.device().available)
    throw sy::Error(SY_ERR_DEVICE, "backend " + backend.plugin().name() +
                                       " reports no usable device (" + backend.device().name + ")");
  auto file = gguf::File::open(model_path);
  auto model = model::load_model(*file, backend);
  const model::Evaluation ev = model::evaluate(*model, backend, tokens, n_greedy);
  if (!logits_out.empty()) write_logits(logits_out, ev.logits);
  std::printf("eval: %s, %zu tokens, %u logits per position on %s%s%s\n",
              model->info().arch.c_str(), tokens.size(), model->info().n_vocab,
              backend.plugin().name().c_str(), logits_out.empty() ? "" : ", written to ",
              logits_out.c_str());
  if (n_greedy > 0) {
    std::printf("greedy:");
    for (int32_t t : ev.greedy) std::printf(" %d", t);
    std::printf("\n");
  }
  return 0;
}

}  // namespace sy::cli
