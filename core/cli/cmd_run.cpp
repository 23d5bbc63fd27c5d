// switchyard run: load a variant from TOML (or the embedded default) and generate text.
#include <cstdio>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/default_model.h"
#include "cli/options.h"
#include "engine/variant.h"
#include "host/host_api.h"
#include "host/log.h"
#include "switchyard/common/error.h"

namespace sy::cli {
namespace {

// The embedded default: a small generated dense model on oneDNN with the original scheduler.
const std::string kDefaultConfig = std::string(kDefaultModelAndBackend) + R"(
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
  Command app("run",
              "Loads the variant a config names and generates text. Without --config the "
              "embedded default runs: it generates models/dense-small.gguf.");
  std::string config, prompt, log_level;
  std::optional<float> temperature, top_p;
  std::optional<int32_t> top_k;
  std::optional<uint64_t> seed;
  std::optional<uint32_t> max_tokens_opt;
  app.add_option("--config", config, "the variant's TOML config");
  app.add_option("--prompt", prompt, "one prompt (default: four built-in ones)");
  // Sampling over the config's [sampling] values.
  app.add_option("--max-tokens", max_tokens_opt, "tokens per prompt")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--temperature", temperature, "0: greedy")->check(CLI::Range(0.0, 100.0));
  app.add_option("--top-k", top_k, "0: all tokens")->check(CLI::Range(0, 1 << 24));
  app.add_option("--top-p", top_p, "nucleus mass")->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", seed, "sampling seed of the first prompt (the next ones add 1 each)");
  app.add_option("--log-level", log_level,
                 "trace, debug, info, warn, error (default: the config's; info without one)");
  if (!parse(app, argc, argv)) return 0;

  const bool configured = !config.empty();
  Config cfg =
      configured ? load_config(config) : parse_config(kDefaultConfig, "<embedded default>");
  set_log_level(!log_level.empty() ? log_level : configured ? cfg.log_level : "info");
  std::vector<std::string> prompts;
  if (app.count("--prompt"))
    prompts.push_back(prompt);
  else
    prompts = {"The switchyard routes each train", "Dense and hybrid models", "Once upon a time",
               "Schedulers decide"};

  auto v = engine::Variant::build(cfg);
  if (!v->tokenizer)
    throw sy::Error(cfg.model.path + " has no text vocabulary; cannot run text prompts");
  text::SamplingParams sp;
  sp.temperature = temperature.value_or(cfg.sampling.temperature);
  sp.top_k = top_k.value_or(cfg.sampling.top_k);
  sp.top_p = top_p.value_or(cfg.sampling.top_p);
  sp.seed = seed.value_or(cfg.sampling.seed);
  const uint32_t max_tokens = max_tokens_opt.value_or(cfg.sampling.max_tokens);

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
