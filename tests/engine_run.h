// Runs a tiny generated llama model through the engine under a given scheduler, so tests can
// compare the tokens of a scheduler under test with a trusted run (greedy tokens do not depend on
// how requests are batched), and capture what the engine logs.
#pragma once

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "engine/engine.h"
#include "gguf/gguf.h"
#include "host/host_api.h"
#include "host/log.h"
#include "host/plugin_host.h"
#include "modelgen/generator.h"

namespace sy::test {

// dense-tiny with f32 weights, written once; a per-process name renamed into place, because
// ctest runs each test of a binary as its own process, in parallel.
inline const std::filesystem::path& tiny_model_file() {
  static const std::filesystem::path path = [] {
    const auto dir = std::filesystem::path(testing::TempDir());
    const auto final_path = dir / "sy-engine-run-dense-tiny-f32-s11.gguf";
    const auto tmp = dir / ("sy-engine-run-" + std::to_string(::getpid()) + ".gguf");
    sy::model::write_random_llama(sy::model::preset_shape("dense-tiny"), "f32", 11, tmp);
    std::filesystem::rename(tmp, final_path);
    return final_path;
  }();
  return path;
}

// Prompts of different lengths (6 to 15 tokens) within the byte vocabulary.
inline std::vector<std::vector<int32_t>> tiny_prompts(int n = 4) {
  std::vector<std::vector<int32_t>> out;
  for (int i = 0; i < n; ++i) {
    std::vector<int32_t> p(6 + 3 * i);
    for (size_t j = 0; j < p.size(); ++j) p[j] = int32_t((j * 31 + i * 17 + 3) % 250) + 3;
    out.push_back(p);
  }
  return out;
}

struct TinyModel {
  std::unique_ptr<gguf::File> file;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<model::Model> model;
  std::unique_ptr<model::KvCache> cache;

  explicit TinyModel(std::shared_ptr<Plugin> backend_plugin, uint32_t blocks = 64) {
    file = gguf::File::open(tiny_model_file());
    backend = std::make_unique<Backend>(std::move(backend_plugin), Params{});
    model = model::load_model(*file, *backend);
    cache = std::make_unique<model::KvCache>(*backend, model->info().n_attn_layers,
                                             model->info().kv_row_width, 16, blocks);
  }
};

struct RunResult {
  std::vector<std::vector<int32_t>> tokens;  // per prompt, in submission order
  bool all_finished_by_length = true;
  uint64_t invalid_plans = 0;
  uint64_t steps = 0;
  std::map<std::string, double> counters;  // the engine's own
};

// Greedy decoding of every prompt to max_new tokens, stepping until the engine is idle.
inline RunResult run_tiny(TinyModel& m, Scheduler& sched,
                          const std::vector<std::vector<int32_t>>& prompts, uint32_t max_new,
                          engine::EngineLimits lim = {}) {
  engine::Engine e(*m.model, *m.cache, sched, lim);
  std::vector<uint64_t> ids;
  for (const auto& p : prompts) {
    engine::RequestSpec spec;
    spec.prompt = p;
    spec.max_new_tokens = max_new;
    spec.stop_at_eos = false;
    ids.push_back(e.submit(spec));
  }
  RunResult out;
  while (!e.idle() && out.steps < 10'000) {
    e.step();
    ++out.steps;
  }
  for (uint64_t id : ids) {
    out.tokens.push_back(e.request(id).output);
    out.all_finished_by_length &= e.request(id).finish == engine::FinishReason::length;
  }
  out.invalid_plans = e.invalid_plans();
  out.counters = e.counters().snapshot();
  return out;
}

inline double counter(const std::string& name) {
  const auto c = host_counters();
  auto it = c.find(name);
  return it == c.end() ? 0 : it->second;
}

// Captures the host log (message text only) while alive.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)) {
    sink_->set_pattern("%l: %v");
    logger()->sinks().push_back(sink_);
    level_ = logger()->level();
    logger()->set_level(spdlog::level::warn);
  }
  ~LogCapture() {
    auto& sinks = logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
    logger()->set_level(level_);
  }
  // The captured lines that contain `part`.
  std::vector<std::string> lines(const std::string& part = "") const {
    std::vector<std::string> out;
    std::istringstream in(text_.str());
    for (std::string l; std::getline(in, l);)
      if (l.find(part) != std::string::npos) out.push_back(l);
    return out;
  }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
  spdlog::level::level_enum level_;
};

}  // namespace sy::test
