// switchyard run: load a variant from TOML (or the embedded default) and generate text.
#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "engine/variant.h"
#include "host/host_api.h"
#include "host/log.h"

namespace sy::cli {
namespace {

// The embedded default: a small generated dense model on oneDNN with the original scheduler.
constexpr const char* kDefaultConfig = R"(
[model]
path = "models/dense-small.gguf"
generate = "dense-small"
seed = 7

[backend]
plugin = "cpu_onednn"

[scheduler]
plugin = "fixed_window"
max_batch = 4
wait_window_ms = 2

[sampling]
max_tokens = 24
)";

// Random weights emit arbitrary bytes: keep printable ASCII, escape the rest.
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  Args a(argc, argv, 2, {"config", "prompt", "max-tokens", "temperature", "top-k", "top-p", "seed", "log-level"},
         {"help"});
  if (a.has("help")) {
    std::printf("usage: switchyard run [--config X.toml] [--prompt TEXT] [--max-tokens N] [--temperature T]\n"
                "                      [--top-k K] [--top-p P] [--seed S] [--log-level L]\n"
                "without --config the embedded default runs: it generates models/dense-small.gguf\n");
    return 0;
  }
  Config cfg = a.has("config") ? load_config(a.str("config")) : parse_config(kDefaultConfig, "<embedded default>");
  set_log_level(a.str("log-level", a.has("config") ? cfg.log_level : "info"));
  std::vector<std::string> prompts;
  if (a.has("prompt")) prompts.push_back(a.str("prompt"));
  else prompts = {"The switchyard routes each train", "Dense and hybrid models", "Once upon a time",
                  "Schedulers decide"};

  auto v = engine::Variant::build(cfg);
  if (!v->tokenizer) throw std::runtime_error(cfg.model.path + " has no text vocabulary; cannot run text prompts");
  text::SamplingParams sp;
  sp.temperature = static_cast<float>(a.number("temperature", cfg.sampling.temperature));
  sp.top_k = static_cast<int32_t>(a.integer("top-k", cfg.sampling.top_k));
  sp.top_p = static_cast<float>(a.number("top-p", cfg.sampling.top_p));
  sp.seed = static_cast<uint64_t>(a.integer("seed", cfg.sampling.seed));
  const uint32_t max_tokens = static_cast<uint32_t>(a.integer("max-tokens", cfg.sampling.max_tokens));

  const int64_t t0 = now_ns();
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < prompts.size(); ++i) {
    engine::RequestSpec spec;
    spec.prompt = v->tokenizer->encode(prompts[i], true);
    spec.max_new_tokens = max_tokens;
    spec.sampling = sp;
    spec.sampling.seed = sp.seed + i;
    ids.push_back(v->engine->submit(std::move(spec), t0));
  }
  v->engine->run_until_idle();
  const double secs = (now_ns() - t0) / 1e9;
  size_t generated = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto& r = v->engine->request(ids[i]);
    generated += r.output.size();
    std::printf("[%zu] %s%s\n", i, prompts[i].c_str(), printable(v->tokenizer->decode(r.output)).c_str());
  }
  std::fflush(stdout);  // the summary follows the text on a shared terminal
  const auto& mi = v->model->info();
  std::fprintf(stderr,
               "model %s (%.1fM params, %u layers), backend %s, scheduler %s: %zu requests, %zu tokens "
               "in %.2f s (%.1f tok/s)\n",
               cfg.model.path.c_str(), mi.n_params / 1e6, mi.n_layer, v->backend_plugin->name().c_str(),
               v->scheduler->name().c_str(), ids.size(), generated, secs, generated / secs);
  return 0;
}

}  // namespace sy::cli
