// switchyard eval: one token sequence through a model, with llama.cpp's tool conventions: the
// whole prompt in one batch, every position's logits as raw little-endian float32 rows
// (n_prompt rows of n_vocab, the format of ../shared/ggml-reference), and a greedy continuation.
#include <bit>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/args.h"
#include "cli/commands.h"
#include "gguf/gguf.h"
#include "host/backend.h"
#include "host/plugin_host.h"
#include "model/evaluate.h"
#include "model/model.h"

namespace sy::cli {
namespace {

constexpr const char* kUsage =
    "usage: switchyard eval MODEL.gguf --tokens ID,ID,... [--backend B] [--logits-out F]\n"
    "                       [--greedy N] [--plugin-dir D]\n"
    "  runs the tokens through the model in one batch (backend default: cpu_onednn);\n"
    "  --logits-out writes every position's logits as raw little-endian float32, n_tokens rows\n"
    "  of n_vocab; --greedy N then decodes N tokens greedily and prints `greedy: id id ...`\n";

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
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int cmd_eval(int argc, char** argv) {
  Args a(argc, argv, 2, {"tokens", "backend", "logits-out", "greedy", "plugin-dir"}, {"help"});
  if (a.has("help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (a.positional().size() != 1)
    throw UsageError("expected one GGUF file\n" + std::string(kUsage));
  if (!a.has("tokens")) throw UsageError("--tokens is required");
  const std::vector<int32_t> tokens = parse_tokens(a.str("tokens"));
  const int64_t n_greedy = a.integer("greedy", 0);
  if (n_greedy < 0 || n_greedy > 65536) throw UsageError("--greedy must be in [0, 65536]");

  std::vector<std::filesystem::path> dirs;
  if (a.has("plugin-dir")) dirs.push_back(a.str("plugin-dir"));
  for (auto& d : PluginHost::default_dirs()) dirs.push_back(d);
  const PluginHost host(dirs);
  Backend backend(host.load(SY_PLUGIN_BACKEND, a.str("backend", "cpu_onednn")), Params{});
  if (!backend.device().available)
    throw std::runtime_error("backend " + backend.plugin().name() + " reports no usable device (" +
                             backend.device().name + ")");
  auto file = gguf::File::open(a.positional()[0]);
  auto model = model::load_model(*file, backend);
  const model::Evaluation ev =
      model::evaluate(*model, backend, tokens, static_cast<uint32_t>(n_greedy));
  if (a.has("logits-out")) write_logits(a.str("logits-out"), ev.logits);
  std::printf("eval: %s, %zu tokens, %u logits per position on %s%s%s\n",
              model->info().arch.c_str(), tokens.size(), model->info().n_vocab,
              backend.plugin().name().c_str(), a.has("logits-out") ? ", written to " : "",
              a.has("logits-out") ? a.str("logits-out").c_str() : "");
  if (n_greedy > 0) {
    std::printf("greedy:");
    for (int32_t t : ev.greedy) std::printf(" %d", t);
    std::printf("\n");
  }
  return 0;
}

}  // namespace sy::cli
