// switchyard bench-hybrid: a dense and a hybrid (state-space or gated-delta-net layers beside
// attention, sparse MoE) model of equal total parameters, side by side, as presets of the same
// families' proportions (qwen3-20m / qwen35moe-20m, dense-20m / nemotron-h-20m) or any two files:
// decode tokens/s, FLOPs and bytes per decoded token (computed from the shapes, and measured:
// achieved FLOP/s from wall time, bytes from the weights the tokens actually touched, i.e. the
// experts the router picked), prefill throughput at several prompt lengths (the SSM's linear cost
// against attention's quadratic one), memory per request at those lengths, and the expert
// activation histogram; on a CPU backend, decode's fraction of the streaming-read bandwidth. Run,
// not a test: numbers depend on the machine.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include "bench/model_costs.h"
#include "bench/read_probe.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "gguf/gguf.h"
#include "host/backend.h"
#include "host/host_api.h"
#include "host/plugin_host.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "modelgen/generator.h"
#include "modelgen/generator_detail.h"  // file_type: the names mkmodel --dtype accepts
#include "switchyard/common/error.h"

namespace sy::cli {
namespace {

using bench::flops_per_token;
using bench::kv_bytes_per_token;
using model::ModelDesc;

constexpr uint32_t kBatch = 4;  // sequences of the batched decode run

// ---- one model on the backend ----

struct Loaded {
  ModelDesc desc;  // read from the file: a preset's or a user's
  std::string name;
  std::unique_ptr<gguf::File> file;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<model::Model> model;
  std::unique_ptr<model::KvCache> cache;
};

struct DecodeFigures {
  uint32_t batch = 1;
  double tps = 0, flops = 0, bytes_computed = 0, bytes_measured = 0;
  double frac_read = 0;  // of the streaming-read bandwidth (CPU backends; 0 on a GPU)
  std::map<std::string, double> experts;  // activations counted during the run
};

struct PrefillFigures {
  uint32_t len = 0;
  double tps = 0, seconds = 0, flops_per_token = 0;
  uint64_t kv_bytes = 0, state_bytes = 0, activation_bytes = 0;
};

std::map<std::string, double> counters_with(const std::string& prefix) {
  std::map<std::string, double> out;
  for (const auto& [k, v] : host_counters())
    if (k.rfind(prefix, 0) == 0) out[k] = v;
  return out;
}
std::map<std::string, double> minus(const std::map<std::string, double>& a,
                                    const std::map<std::string, double>& b) {
  std::map<std::string, double> out;
  for (const auto& [k, v] : a) out[k] = v - (b.count(k) ? b.at(k) : 0.0);
  return out;
}

std::vector<int32_t> prompt(uint32_t n, uint32_t salt = 0) {
  std::vector<int32_t> p(n);
  for (uint32_t i = 0; i < n; ++i) p[i] = 3 + int32_t((i * 7 + i / 13 + salt * 31) % 256);
  return p;
}

int32_t argmax(const float* v, size_t n) {
  return int32_t(std::max_element(v, v + n) - v);
}

// Prefills `len` tokens of sequence `slot` in chunks (as the engine's max_batch_tokens would).
std::vector<float> prefill(Loaded& m, const std::vector<int32_t>& toks,
                           std::vector<int32_t>& blocks, int32_t slot, uint32_t chunk) {
  std::vector<float> logits;
  const uint32_t len = static_cast<uint32_t>(toks.size());
  for (uint32_t pos = 0; pos < len; pos += chunk) {
    const uint32_t n = std::min(chunk, len - pos);
    model::SeqInput in{&toks[pos], n, pos, &blocks, pos + n == len, slot};
    logits = m.model->forward({in}, *m.cache);
  }
  return logits;
}

PrefillFigures measure_prefill(Loaded& m, uint32_t len, uint32_t chunk) {
  std::vector<int32_t> blocks;
  if (!m.cache->pool().allocate(m.cache->blocks_for(len), blocks))
    throw sy::Error("KV cache too small");
  PrefillFigures f;
  f.len = len;
  const int64_t t0 = now_ns();
  prefill(m, prompt(len), blocks, 0, chunk);
  f.seconds = (now_ns() - t0) / 1e9;
  f.tps = len / f.seconds;
  double fl = 0;
  for (uint32_t p = 0; p < len; ++p) fl += flops_per_token(m.desc, p, p + 1 == len);
  f.flops_per_token = fl / len;
  f.kv_bytes = uint64_t(m.cache->blocks_for(len)) * m.cache->bytes_per_block();
  f.state_bytes = m.model->info().state_bytes_per_seq;
  f.activation_bytes = m.model->activation_bytes();
  m.cache->pool().release(blocks);
  return f;
}

// `batch` sequences prefilled with `len` tokens each, then `steps` decode steps of all of them
// in one forward each. Measured bytes: the non-expert weights once per step, the experts the
// step's tokens selected once each (their union, from the expert_loads counters), the KV rows
// and recurrent state each sequence reads.
DecodeFigures measure_decode(Loaded& m, uint32_t batch, uint32_t len, uint32_t steps,
                             uint32_t chunk) {
  std::vector<std::vector<int32_t>> blocks(batch);
  std::vector<int32_t> tok(batch);
  for (uint32_t b = 0; b < batch; ++b) {
    if (!m.cache->pool().allocate(m.cache->blocks_for(len + steps), blocks[b]))
      throw sy::Error("KV cache too small");
    const auto logits = prefill(m, prompt(len, b), blocks[b], int32_t(b), chunk);
    tok[b] = argmax(logits.data(), logits.size());
  }
  const auto acts0 = counters_with("expert_activations."), loads0 = counters_with("expert_loads.");
  const uint32_t V = m.model->info().n_vocab;
  const int64_t t0 = now_ns();
  for (uint32_t i = 0; i < steps; ++i) {
    std::vector<model::SeqInput> in;
    for (uint32_t b = 0; b < batch; ++b)
      in.push_back({&tok[b], 1, len + i, &blocks[b], true, int32_t(b)});
    const auto logits = m.model->forward(in, *m.cache);
    for (uint32_t b = 0; b < batch; ++b) tok[b] = argmax(logits.data() + size_t(b) * V, V);
  }
  DecodeFigures d;
  d.batch = batch;
  const double tokens = double(batch) * steps;
  d.tps = tokens / ((now_ns() - t0) / 1e9);
  for (uint32_t i = 0; i < steps; ++i) d.flops += flops_per_token(m.desc, len + i, true) / steps;
  const auto& info = m.model->info();
  const double kv = bench::kv_bytes_per_decode_step(m.desc, model::kv_elem_bytes(m.cache->dtype()),
                                                    len, steps),
               st = 2.0 * info.state_bytes_per_seq;
  double expert_bytes = 0;
  for (const auto& t : m.file->tensors())
    if (t.name.find("_exps.weight") != std::string::npos) expert_bytes += double(t.nbytes);
  const double embd =
      m.desc.tied_output ? 0 : double(m.file->find_tensor("token_embd.weight")->nbytes);
  const double dense = double(info.weight_bytes) - expert_bytes - embd;  // read once per step
  const double per_expert =
      m.desc.n_expert ? expert_bytes / (double(m.desc.n_moe_layers()) * m.desc.n_expert) : 0;
  // Computed: every token of the step reads its own top-k (no sharing assumed).
  d.bytes_computed = dense / batch + (double(info.bytes_per_token) - dense) + kv + st;
  double loads = 0;
  for (const auto& [k, v] : minus(counters_with("expert_loads."), loads0)) loads += v;
  d.bytes_measured = (dense * steps + per_expert * loads) / tokens + kv + st;
  d.experts = minus(counters_with("expert_activations."), acts0);
  for (auto& b : blocks) m.cache->pool().release(b);
  return d;
}

}  // namespace

int cmd_bench_hybrid(int argc, char** argv) {
  Command app("bench-hybrid",
              "A dense and a hybrid model of equal total parameters side by side: decode "
              "tokens/s, FLOPs and bytes per decoded token (computed and measured), prefill at "
              "several prompt lengths, memory per request and expert activations. Each model is "
              "a preset (written once under --models-dir) or a GGUF file.");
  std::string backend_name = "cpu_onednn", dense = "qwen3-20m", hybrid = "qwen35moe-20m";
  std::string dtype = "f32", kv_name = "f32", length_list = "128,1024,8192", models_dir = "models";
  uint32_t decode = 32, chunk = 2048;
  int repeat = 3, threads_opt = 0;
  app.add_option("--backend", backend_name, "backend plugin");
  app.add_option("--dense", dense, "the dense model: a preset or a .gguf file");
  app.add_option("--hybrid", hybrid, "the hybrid model: a preset or a .gguf file");
  app.add_option("--dtype", dtype, "weight dtype (an mkmodel --dtype name)");
  app.add_option("--lengths", length_list, "prompt lengths, comma-separated");
  app.add_option("--decode-tokens", decode, "tokens decoded per run")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--chunk", chunk, "prefill chunk in tokens")->check(CLI::Range(1, 1 << 20));
  app.add_option("--models-dir", models_dir, "where the generated models are kept");
  app.add_option("--threads", threads_opt, "[backend] threads (default: the plugin's)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--repeat", repeat, "runs per figure (the best is kept)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--kv-dtype", kv_name, "KV cache dtype")->check(CLI::IsMember({"f32", "f16"}));
  if (!parse(app, argc, argv)) return 0;
  model::detail::file_type(dtype);  // refuses a name mkmodel does not know, before any work
  const uint32_t kv_dtype = model::kv_dtype_from_name(kv_name);
  std::vector<uint32_t> lengths;
  std::stringstream ss(length_list);
  for (std::string l; std::getline(ss, l, ',');) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(l.c_str(), &end, 10);
    if (l.empty() || *end != '\0' || n == 0 || n > (1u << 24))
      throw UsageError("--lengths: '" + l + "' is not a positive token count");
    lengths.push_back(static_cast<uint32_t>(n));
  }
  if (lengths.empty()) throw UsageError("--lengths: no length given");
  const uint32_t max_len = *std::max_element(lengths.begin(), lengths.end());

  PluginHost host(PluginHost::default_dirs());
  auto plugin = host.load(SY_PLUGIN_BACKEND, backend_name);
  Params params;
  if (threads_opt > 0) params.emplace_back("threads", std::to_string(threads_opt));
  std::vector<Loaded> models(2);
  const std::string names[2] = {dense, hybrid};
  for (int i = 0; i < 2; ++i) {
    Loaded& m = models[i];
    m.name = names[i];
    std::filesystem::path path = m.name;
    const bool is_file = path.extension() == ".gguf";
    if (!is_file) {  // a preset, written once
      path = models_dir + "/" + m.name + "-" + dtype + ".gguf";
      if (!std::filesystem::exists(path)) {
        std::filesystem::create_directories(path.parent_path());
        std::printf("writing %s\n", path.c_str());
        model::write_random_model(model::preset_shape(m.name), dtype, 1, path);
      }
    } else {
      m.name = path.stem().string();
    }
    m.file = gguf::File::open(path);
    m.desc = model::read_model_desc(*m.file);
    if (m.desc.n_ctx < max_len + decode)
      throw UsageError(m.name + " has a context of " + std::to_string(m.desc.n_ctx) + " tokens");
    m.backend = std::make_unique<Backend>(plugin, params);
    m.model = model::load_model(*m.file, *m.backend);
    m.model->reserve_state_slots(kBatch);
    const uint32_t bs = 16;
    const uint32_t blocks =
        std::max((max_len + bs - 1) / bs, kBatch * ((lengths.front() + decode + bs - 1) / bs));
    m.cache = std::make_unique<model::KvCache>(*m.backend, m.model->info().kv_row_widths, bs,
                                               blocks, kv_dtype);
    measure_decode(m, 1, 64, 2, chunk);  // warm-up: primitives, pages
  }

  std::printf("backend %s, %s weights, %s KV cache, prefill in chunks of %u tokens\n\n",
              plugin->name().c_str(), dtype.c_str(), kv_name.c_str(), chunk);
  std::printf("%-20s %-14s %9s %9s %8s %6s %7s %12s %12s %10s\n", "model", "arch", "params",
              "active", "weights", "layers", "attn", "KV B/token", "state B/seq", "experts");
  for (auto& m : models) {
    const auto& info = m.model->info();
    char experts[32] = "-";
    if (info.n_expert)
      std::snprintf(experts, sizeof experts, "%u of %u", info.n_expert_used, info.n_expert);
    std::printf("%-20s %-14s %8.2fM %8.2fM %6.1fMB %6u %7u %12llu %12llu %10s\n", m.name.c_str(),
                info.arch.c_str(), info.n_params / 1e6, info.n_active_params / 1e6,
                info.weight_bytes / 1e6, info.n_layer, info.n_attn_layers,
                (unsigned long long)kv_bytes_per_token(m.desc, model::kv_elem_bytes(kv_dtype)),
                (unsigned long long)info.state_bytes_per_seq, experts);
  }
  // Memory one request holds at 1k, 8k and 32k tokens of context, from the descriptions: the KV
  // of its attention layers (at most a window's where one is set) and its recurrent state.
  std::printf("\nmemory per request (computed: KV + recurrent state, %s KV)\n", kv_name.c_str());
  std::printf("%-20s %12s %12s %12s\n", "model", "1k MB", "8k MB", "32k MB");
  for (auto& m : models) {
    std::printf("%-20s", m.name.c_str());
    for (uint64_t ctx : {1024ull, 8192ull, 32768ull}) {
      const double bytes = bench::kv_bytes_held(m.desc, model::kv_elem_bytes(kv_dtype), ctx) +
                           double(bench::state_bytes_per_seq(m.desc));
      std::printf(" %12.2f", bytes / 1e6);
    }
    std::printf("\n");
  }

  // Decode after the shortest prompt, one sequence and a batch; then prefill at every length.
  std::vector<DecodeFigures> dec[2];
  std::vector<PrefillFigures> pre[2];
  // The reference of a CPU decode: the streaming read of as many threads as the backend's pool,
  // probed just before and just after each run (bench-backend's rule), the larger kept.
  const bool on_cpu = models[0].backend->device().kind != SY_DEVICE_GPU;
  bench::ReadProbe reads(threads_opt > 0 ? static_cast<unsigned>(threads_opt)
                                         : std::max(1u, std::thread::hardware_concurrency()));
  // Best of --repeat runs (prompts of at most 2048 tokens; longer ones run once): the machine's
  // other load only ever slows a run down.
  auto best_decode = [&](Loaded& m, uint32_t batch) {
    DecodeFigures best;
    for (int r = 0; r < repeat; ++r) {
      const double read0 = on_cpu ? reads.measure(4) : 0;
      DecodeFigures d = measure_decode(m, batch, lengths.front(), decode, chunk);
      if (on_cpu) d.frac_read = d.bytes_measured * d.tps / std::max(read0, reads.measure(4));
      if (d.tps > best.tps) best = d;
    }
    return best;
  };
  for (int i = 0; i < 2; ++i) {
    dec[i].push_back(best_decode(models[i], 1));
    dec[i].push_back(best_decode(models[i], kBatch));
    for (uint32_t len : lengths) {
      PrefillFigures best;
      for (int r = 0; r < (len <= 2048 ? repeat : 1); ++r) {
        PrefillFigures f = measure_prefill(models[i], len, chunk);
        if (f.tps > best.tps) best = f;
      }
      pre[i].push_back(best);
    }
  }

  std::printf(
      "\ndecode: %u steps after a %u-token prompt; computed = from the shapes (top-k experts per "
      "token),\n"
      "measured = wall time, and weight bytes of the experts the steps really read\n",
      decode, lengths.front());
  std::printf("%-20s %5s %9s %13s %13s %14s %14s %10s %10s\n", "model", "batch", "tok/s",
              "MFLOP/token", "GFLOP/s meas", "MB/token comp", "MB/token meas", "GB/s meas",
              "frac read");
  for (int i = 0; i < 2; ++i)
    for (const auto& d : dec[i]) {
      char frac[16] = "-";
      if (on_cpu) std::snprintf(frac, sizeof frac, "%.2f", d.frac_read);
      std::printf("%-20s %5u %9.2f %13.2f %13.2f %14.2f %14.2f %10.2f %10s\n",
                  models[i].name.c_str(), d.batch, d.tps, d.flops / 1e6, d.flops * d.tps / 1e9,
                  d.bytes_computed / 1e6, d.bytes_measured / 1e6, d.bytes_measured * d.tps / 1e9,
                  frac);
    }

  std::printf(
      "\nprefill (one request, computed FLOPs include attention over the prompt) and memory per "
      "request\n");
  std::printf("%-20s %7s %10s %9s %13s %11s %11s %12s %12s\n", "model", "prompt", "tok/s",
              "seconds", "MFLOP/token", "KV MB", "state MB", "request MB", "activ. MB");
  for (int i = 0; i < 2; ++i)
    for (const auto& f : pre[i])
      std::printf("%-20s %7u %10.1f %9.2f %13.2f %11.2f %11.3f %12.2f %12.2f\n",
                  models[i].name.c_str(), f.len, f.tps, f.seconds, f.flops_per_token / 1e6,
                  f.kv_bytes / 1e6, f.state_bytes / 1e6, (f.kv_bytes + f.state_bytes) / 1e6,
                  f.activation_bytes / 1e6);
  for (size_t j = 0; j < lengths.size(); ++j)
    std::printf(
        "prompt %5u: hybrid/dense prefill speed %.2fx, dense/hybrid memory per request %.2fx\n",
        lengths[j], pre[1][j].tps / pre[0][j].tps,
        double(pre[0][j].kv_bytes + pre[0][j].state_bytes) /
            double(pre[1][j].kv_bytes + pre[1][j].state_bytes));
  std::printf("peak memory: ");
  for (int i = 0; i < 2; ++i)
    std::printf("%s%s weights %.1f MB + KV cache %.1f MB + state %.2f MB + activations %.1f MB",
                i ? "; " : "", models[i].name.c_str(), models[i].model->info().weight_bytes / 1e6,
                models[i].cache->bytes() / 1e6, models[i].model->state_bytes_allocated() / 1e6,
                models[i].model->activation_bytes() / 1e6);
  std::printf("\n");

  for (int i = 0; i < 2; ++i) {
    if (models[i].desc.n_expert == 0) continue;
    std::printf("\nexpert activations of %s, batched decode run (share of selections per layer)\n",
                models[i].name.c_str());
    std::map<uint32_t, std::vector<double>> per_layer;
    for (const auto& [k, v] : dec[i].back().experts) {
      uint32_t layer = 0, e = 0;
      if (std::sscanf(k.c_str(), "expert_activations.%u.%u", &layer, &e) != 2) continue;
      auto& row = per_layer[layer];
      row.resize(std::max<size_t>(row.size(), e + 1));
      row[e] = v;
    }
    for (const auto& [layer, row] : per_layer) {
      double sum = 0;
      for (double v : row) sum += v;
      std::printf("  layer %2u:", layer);
      for (size_t e = 0; e < row.size(); ++e)
        std::printf(" e%zu %5.1f%%", e, sum > 0 ? 100.0 * row[e] / sum : 0.0);
      std::printf("\n");
    }
  }
  return 0;
}

}  // namespace sy::cli
