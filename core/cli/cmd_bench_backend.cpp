// switchyard bench-backend: per weight dtype, prefill and decode tokens/s of one sequence on a
// backend (min / median / max of --repeat runs), decode's fraction of the streaming-read
// bandwidth and prefill's fraction of the backend's GEMM peak, both measured in the same run
// (for a GPU backend, decode is compared with the device's own streaming bandwidth).
// --model FILE measures a user's GGUF files instead of the preset's dtypes, a row each.
// --crossover times the GEMV and GEMM paths of cpu_onednn for each M. --param KEY=V1,V2 runs
// each dtype once per value, the runs interleaved, so their ratio sees the same machine noise.
// Run, not a test: numbers depend on the machine.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/model_costs.h"
#include "bench/read_probe.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "engine/variant.h"
#include "gguf/gguf.h"
#include "host/host_api.h"
#include "host/plugin_host.h"
#include "model/kv_cache.h"
#include "modelgen/generator.h"
#include "modelgen/generator_detail.h"  // file_type: the names mkmodel --dtype accepts
#include "switchyard/common/dtype.h"
#include "switchyard/common/error.h"

namespace sy::cli {
namespace {

// Best of several memcpy passes over buffers far larger than the caches: bytes copied per second.
double copy_bandwidth() {
  const size_t n = 256u << 20;
  std::vector<char> a(n, 1), b(n, 2);
  double best = 0;
  for (int i = 0; i < 5; ++i) {
    const int64_t t0 = now_ns();
    std::memcpy(b.data(), a.data(), n);
    const double s = (now_ns() - t0) / 1e9;
    best = std::max(best, n / s);
    std::swap(a, b);
  }
  return best;
}

// A GPU backend's reference is its own memory: what the backend's `add` streams through buffers
// far larger than its caches (two reads and a write per element), timed after synchronize.
double device_stream_bandwidth(Backend& b) {
  uint64_t n = 64ull << 20;  // floats per operand: 768 MiB for the three
  while (n > (1u << 20) && b.device().memory_free && 12 * n > b.device().memory_free / 4) n /= 2;
  auto x = b.alloc(4 * n), y = b.alloc(4 * n), z = b.alloc(4 * n);
  const sy_tensor tx = make_tensor(*x, SY_DTYPE_F32, {(int64_t)n});
  const sy_tensor ty = make_tensor(*y, SY_DTYPE_F32, {(int64_t)n});
  const sy_tensor tz = make_tensor(*z, SY_DTYPE_F32, {(int64_t)n});
  auto pass = [&](int reps) {
    for (int i = 0; i < reps; ++i) b.check(b.api().add(b.handle(), &tx, &ty, &tz), "add");
    b.check(b.api().synchronize(b.handle()), "synchronize");
  };
  pass(1);  // warm-up
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const int64_t t0 = now_ns();
    pass(4);
    best = std::max(best, 4.0 * 12.0 * n / ((now_ns() - t0) / 1e9));
  }
  return best;
}

// One matmul y{N, M} = W{K, N} x{K, M} on the backend, random data, W of `dtype`.
struct MatmulCase {
  std::unique_ptr<Buffer> x, w, y;
  sy_tensor tx, tw, ty;
  MatmulCase(Backend& b, uint32_t dtype, int64_t m, int64_t k, int64_t n) {
    std::vector<float> xs(m * k), ws(k * n);
    uint64_t r = 88172645463325252ull;
    auto next = [&] {
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      return (float)((r >> 40) * (2.0 / (1 << 24)) - 1.0);
    };
    for (float& v : xs) v = next();
    for (float& v : ws) v = next();
    const int64_t rb = dtype::row_bytes(dtype, k);
    std::vector<uint8_t> wq(rb * n);
    for (int64_t j = 0; j < n; ++j) dtype::row_from_f32(dtype, &ws[j * k], &wq[j * rb], k);
    x = b.alloc(xs.size() * 4), w = b.alloc(wq.size()), y = b.alloc(m * n * 4);
    x->write(0, xs.data(), xs.size() * 4);
    w->write(0, wq.data(), wq.size());
    tx = make_tensor(*x, SY_DTYPE_F32, {k, m});
    tw = make_tensor(*w, dtype, {k, n});
    ty = make_tensor(*y, SY_DTYPE_F32, {n, m});
    // W in the backend's own layout, as a model's load gives it (weight_pack, ABI 1.4)
    sy_buffer_t out = nullptr;
    if (b.api().weight_pack) b.weight_pack(&tw, &out);
    if (out) {
      w = std::make_unique<Buffer>(&b, out, wq.size());
      tw = make_tensor(*w, dtype, {k, n});
    }
  }
  // Best seconds per call over `reps` timed passes of `calls` calls.
  double seconds(Backend& b, int reps, int calls) {
    auto run = [&](int c) {
      for (int i = 0; i < c; ++i) b.check(b.api().matmul(b.handle(), &tx, &tw, &ty), "matmul");
      b.check(b.api().synchronize(b.handle()), "synchronize");
    };
    run(2);  // warm-up: primitives, pages
    double best = 1e30;
    for (int rep = 0; rep < reps; ++rep) {
      const int64_t t0 = now_ns();
      run(calls);
      best = std::min(best, (now_ns() - t0) / 1e9 / calls);
    }
    return best;
  }
};

// The backend's F32 GEMM peak: FLOP/s of a large square-ish matmul, best of `reps` passes;
// like ReadProbe, measured again next to every timed run.
class GemmProbe {
 public:
  explicit GemmProbe(Backend& b) : b_(b), c_(b, SY_DTYPE_F32, kM, kK, kN) {}
  double measure(int reps) { return 2.0 * kM * kK * kN / c_.seconds(b_, reps, 3); }

 private:
  static constexpr int64_t kM = 512, kK = 1024, kN = 1024;
  Backend& b_;
  MatmulCase c_;
};

struct Stats {
  double min = 0, median = 0, max = 0;
};
Stats stats_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2], v.back()};
}

struct Figures {
  double prefill_tps = 0, decode_tps = 0;
};

// One timed prefill of `prompt_len` tokens, then `decode_tokens` greedy decode steps, both after
// `depth` tokens of context (llama-bench's -d; their prefill is not timed).
Figures measure(engine::Variant& v, uint32_t prompt_len, uint32_t decode_tokens,
                uint32_t depth = 0) {
  auto& m = *v.model;
  std::vector<int32_t> blocks;
  const uint32_t total = depth + prompt_len + decode_tokens;
  if (!v.cache->pool().allocate(v.cache->blocks_for(total), blocks))
    throw sy::Error("KV cache too small for the benchmark");
  std::vector<int32_t> prompt(depth + prompt_len);
  for (uint32_t i = 0; i < depth + prompt_len; ++i) prompt[i] = 3 + (i * 7) % 256;
  // A model with recurrent layers keeps the sequence's state in slot 0 (the engine's one slot).
  const int32_t slot = m.info().state_bytes_per_seq > 0 ? 0 : -1;
  auto input = [&](const int32_t* tokens, uint32_t n, uint32_t pos0, bool logits) {
    model::SeqInput in{tokens, n, pos0, &blocks, logits};
    in.state_slot = slot;
    return in;
  };
  for (uint32_t p = 0; p < depth; p += 512) {  // in chunks, as a server's prefill would run
    const uint32_t n = std::min(512u, depth - p);
    m.forward({input(prompt.data() + p, n, p, false)}, *v.cache);
  }
  const model::SeqInput in = input(prompt.data() + depth, prompt_len, depth, true);
  const uint32_t first = depth + prompt_len;  // the decode's first position
  Figures f;
  int64_t t0 = now_ns();
  auto logits = m.forward({in}, *v.cache);
  f.prefill_tps = prompt_len / ((now_ns() - t0) / 1e9);
  int32_t tok =
      static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  t0 = now_ns();
  for (uint32_t i = 0; i < decode_tokens; ++i) {
    logits = m.forward({input(&tok, 1, first + i, true)}, *v.cache);
    tok = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  f.decode_tps = decode_tokens / ((now_ns() - t0) / 1e9);
  v.cache->pool().release(blocks);
  return f;
}

// cpu_onednn's GEMV and GEMM side by side for each M, on the ~100M model's FFN shapes, the
// weights packed where the backend packs them (a packed weight's integer kernels are its
// prefill GEMM too, so M goes up to prefill sizes).
void crossover(const std::string& backend, const Params& base,
               const std::vector<std::string>& dts) {
  PluginHost host(PluginHost::default_dirs());
  auto plugin = host.load(SY_PLUGIN_BACKEND, backend);
  Params gemv = base, gemm = base;
  gemv.emplace_back("gemv_max_m", "1048576");
  gemm.emplace_back("gemv_max_m", "0");
  Backend bv(plugin, gemv), bm(plugin, gemm);
  std::printf(
      "\ncrossover: microseconds per matmul, GEMV kernel vs oneDNN GEMM (K x N = 768 x 2816"
      " and 2816 x 768, summed)\n%-6s %4s %10s %10s %8s\n",
      "dtype", "M", "GEMV us", "GEMM us", "GEMM/GEMV");
  for (const std::string& dt : dts) {
    const uint32_t id = model::detail::file_type(dt).base;
    for (int64_t m : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256, 512}) {
      double t[2] = {0, 0};
      for (auto [k, n] : {std::pair<int64_t, int64_t>{768, 2816}, {2816, 768}}) {
        MatmulCase cv(bv, id, m, k, n), cm(bm, id, m, k, n);
        t[0] += cv.seconds(bv, 5, 4);
        t[1] += cm.seconds(bm, 5, 4);
      }
      std::printf("%-6s %4lld %10.1f %10.1f %8.2f\n", dt.c_str(), (long long)m, t[0] * 1e6,
                  t[1] * 1e6, t[1] / t[0]);
    }
  }
}

// The backend params of each row set: every combination of the --param values (KEY=V1,V2,...),
// with a label naming the multi-valued ones ("" when there are none).
struct ParamSet {
  Params params;
  std::string label;
};
std::vector<ParamSet> param_sets(const Params& base, const std::vector<std::string>& opts) {
  std::vector<ParamSet> sets = {{base, ""}};
  for (const std::string& o : opts) {
    const size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--param " + o + ": expected KEY=VALUE");
    const std::string key = o.substr(0, eq);
    std::vector<std::string> values;
    std::stringstream vs(o.substr(eq + 1));
    for (std::string v; std::getline(vs, v, ',');) values.push_back(v);
    if (values.empty()) values.push_back("");
    std::vector<ParamSet> next;
    for (const ParamSet& s : sets)
      for (const std::string& v : values) {
        ParamSet n = s;
        n.params.emplace_back(key, v);
        if (values.size() > 1) n.label += (n.label.empty() ? "" : ",") + key + "=" + v;
        next.push_back(n);
      }
    sets = next;
  }
  return sets;
}

// One row of the table: a preset written in a dtype, or a user's file.
struct Row {
  std::string label;      // the dtype, or the file's name
  std::string path;       // the GGUF file
  std::string dtype;      // for a preset: mkmodel's file type ("" for a file)
  model::ModelDesc desc;  // what the costs are computed from
};

}  // namespace

int cmd_bench_backend(int argc, char** argv) {
  Command app("bench-backend",
              "Per weight dtype, prefill and decode tokens/s of one sequence on a backend (min / "
              "median / max of --repeat runs), decode's fraction of the streaming-read bandwidth "
              "and prefill's fraction of the backend's GEMM peak, both measured in this run.");
  std::string backend = "cpu_onednn", preset = "dense-100m", dtype_list = "f32,f16,bf16,q8_0";
  std::string kv_name = "f32", models_dir = "models";
  uint32_t prompt_len = 256, decode_tokens = 32, depth = 0;
  int repeat = 3, threads_opt = 0;
  bool want_crossover = false;
  std::vector<std::string> param_opts;
  app.add_option("--backend", backend, "backend plugin");
  app.add_option("--dtypes", dtype_list, "weight dtypes, comma-separated (mkmodel --dtype names)");
  app.add_option("--preset", preset, "model shape preset");
  // -p, -n, -r, -d: llama-bench's names for the same things.
  app.add_option("-p,--prompt-len", prompt_len, "prompt tokens (prefill)")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("-n,--decode-tokens", decode_tokens, "tokens decoded per run")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("-d,--depth", depth,
                 "tokens of context before the timed prefill and decode (not timed)")
      ->check(CLI::Range(0, 1 << 22));
  app.add_option("--models-dir", models_dir, "where the generated models are kept");
  app.add_option("--threads", threads_opt, "[backend] threads (default: the plugin's)")
      ->check(CLI::Range(1, 1024));
  app.add_option("-r,--repeat", repeat, "runs per dtype")->check(CLI::Range(1, 1000));
  app.add_option("--kv-dtype", kv_name, "KV cache dtype")->check(CLI::IsMember({"f32", "f16"}));
  app.add_flag("--crossover", want_crossover, "time cpu_onednn's GEMV against its GEMM per M");
  bool pure = false;
  app.add_flag("--pure", pure,
               "every matrix in the dtype's base type (llama-quantize's --pure; mxfp4 then "
               "covers a dense model, whose matrices MXFP4_MOE leaves Q8_0)");
  std::vector<std::string> model_files;
  app.add_option("--model", model_files,
                 "a GGUF file to measure instead of the preset (repeatable, a row each; "
                 "--dtypes, --preset and --pure then do not apply)")
      ->check(CLI::ExistingFile);
  app.add_option("--param", param_opts,
                 "[backend] param KEY=VALUE (repeatable); KEY=V1,V2,...: one row per value, "
                 "their runs interleaved");
  if (!parse(app, argc, argv)) return 0;
  const uint32_t kv_dtype = model::kv_dtype_from_name(kv_name);
  std::vector<std::string> dtypes;
  std::stringstream ss(dtype_list);
  const auto shape = model::preset_shape(preset);
  std::vector<Row> rows;
  for (const std::string& f : model_files) {  // read before any work: a bad file fails here
    const auto file = gguf::File::open(f);
    rows.push_back(
        {std::filesystem::path(f).stem().string(), f, "", model::read_model_desc(*file)});
  }
  for (std::string d; model_files.empty() && std::getline(ss, d, ',');) {
    // any name mkmodel --dtype knows; refused before any work
    const dtype::FileType& ft = model::detail::file_type(d);
    // MXFP4_MOE types only expert matrices MXFP4: a dense row would measure Q8_0 under its name.
    if (ft.base == SY_DTYPE_MXFP4 && !pure && shape.n_expert == 0)
      throw UsageError("--dtypes " + d + ": MXFP4_MOE puts MXFP4 on expert matrices only, and " +
                       preset + " has none (add --pure for MXFP4 on every matrix)");
    dtypes.push_back(d);
    rows.push_back({d, models_dir + "/" + preset + "-" + d + (pure ? "-pure" : "") + ".gguf", d,
                    model::describe_shape(shape)});
  }
  Params params;
  if (threads_opt > 0) params.emplace_back("threads", std::to_string(threads_opt));
  const std::vector<ParamSet> sets = param_sets(params, param_opts);
  const unsigned threads = threads_opt > 0 ? static_cast<unsigned>(threads_opt)
                                           : std::max(1u, std::thread::hardware_concurrency());

  bench::ReadProbe reads(threads);
  const double bw = copy_bandwidth(), rbw = reads.measure(10);
  std::printf(
      "memcpy bandwidth: %.2f GB/s copied (%.2f GB/s read+write); streaming read (%u "
      "threads): %.2f GB/s\n",
      bw / 1e9, 2 * bw / 1e9, threads, rbw / 1e9);
  double device_bw = 0;  // set for a GPU backend, whose fractions are of its own bandwidth
  int label_width = 6;
  for (const Row& r : rows) label_width = std::max(label_width, (int)r.label.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    double prompt_flops = 0;
    for (uint32_t pos = 0; pos < prompt_len; ++pos)
      prompt_flops += bench::flops_per_token(row.desc, depth + pos, pos + 1 == prompt_len);
    std::vector<std::unique_ptr<engine::Variant>> vs;  // one per param set
    for (const ParamSet& set : sets) {
      Config cfg;
      cfg.model.path = row.path;
      if (!row.dtype.empty()) {  // a preset, written once under models_dir
        cfg.model.pure = pure;
        cfg.model.generate = preset;
        cfg.models_dir = models_dir;
        cfg.model.dtype = row.dtype;
      }
      cfg.backend.plugin = backend;
      cfg.backend.params = set.params;
      cfg.scheduler.plugin = "fixed_window";
      cfg.engine.max_seqs = 1;
      cfg.engine.max_context = depth + prompt_len + decode_tokens + 16;
      cfg.engine.kv_dtype = kv_dtype;
      vs.push_back(engine::Variant::build(cfg));
    }
    GemmProbe gemm(*vs[0]->backend);
    if (i == 0) {
      auto& v = vs[0];
      if (v->backend->device().kind == SY_DEVICE_GPU) {
        device_bw = device_stream_bandwidth(*v->backend);
        std::printf("%s: %s, streaming (add): %.2f GB/s\n", v->backend_plugin->name().c_str(),
                    v->backend->device().name, device_bw / 1e9);
      }
      std::printf(
          "%s GEMM peak (F32 512x1024x1024): %.1f GFLOP/s; %s KV cache; %d runs each: "
          "min / median / max; each run's fractions are of the larger of the bandwidths (CPU) and "
          "GEMM peaks measured just before and just after it; frac read counts the weights of a "
          "token (MB/token) and the KV rows and state a decode step reads (KV MB, the mean over "
          "the steps)%s\n",
          backend.c_str(), gemm.measure(5) / 1e9, kv_name.c_str(), repeat,
          pure ? "; --pure: every matrix in the row's base type" : "");
      std::printf("%-*s %8s %9s %8s %24s %22s %18s %10s %18s\n", label_width,
                  model_files.empty() ? "dtype" : "model", "params", "MB/token", "KV MB",
                  "prefill tok/s", "decode tok/s", device_bw ? "frac device" : "frac read",
                  "pf GFLOP/s", "frac GEMM");
    }
    for (auto& v : vs) measure(*v, prompt_len, 2);  // warm-up: primitives, pages, caches
    std::vector<std::vector<double>> pre(vs.size()), dec(vs.size()), frac_read(vs.size()),
        frac_gemm(vs.size());
    // What a decode step reads: a token's weights, then the K and V rows of every position it
    // attends to and the recurrent state, read and written (bench-hybrid counts the same).
    const double kv = bench::kv_bytes_per_decode_step(row.desc, model::kv_elem_bytes(kv_dtype),
                                                      depth + prompt_len, decode_tokens);
    auto step_bytes = [&](const engine::Variant& v) {
      const auto& info = v.model->info();
      return double(info.bytes_per_token) + kv + 2.0 * double(info.state_bytes_per_seq);
    };
    for (int r = 0; r < repeat; ++r)
      for (size_t s = 0; s < vs.size(); ++s) {
        // the references on both sides of the run, the larger of each: a dip in one probe
        // would otherwise flatter the run
        const double read0 = device_bw ? device_bw : reads.measure(4), peak0 = gemm.measure(2);
        const Figures f = measure(*vs[s], prompt_len, decode_tokens, depth);
        const double read = std::max(read0, device_bw ? device_bw : reads.measure(4)),
                     peak = std::max(peak0, gemm.measure(2));
        pre[s].push_back(f.prefill_tps);
        dec[s].push_back(f.decode_tps);
        frac_read[s].push_back(step_bytes(*vs[s]) * f.decode_tps / read);
        frac_gemm[s].push_back(prompt_flops * f.prefill_tps / prompt_len / peak);
      }
    for (size_t s = 0; s < vs.size(); ++s) {
      const Stats p = stats_of(pre[s]), d = stats_of(dec[s]), fr = stats_of(frac_read[s]),
                  fg = stats_of(frac_gemm[s]);
      const double bytes = static_cast<double>(vs[s]->model->info().bytes_per_token);
      char pre_s[48], dec_s[48], fr_s[48], fg_s[48];
      std::snprintf(pre_s, sizeof pre_s, "%.1f / %.1f / %.1f", p.min, p.median, p.max);
      std::snprintf(dec_s, sizeof dec_s, "%.2f / %.2f / %.2f", d.min, d.median, d.max);
      std::snprintf(fr_s, sizeof fr_s, "%.2f / %.2f / %.2f", fr.min, fr.median, fr.max);
      std::snprintf(fg_s, sizeof fg_s, "%.2f / %.2f / %.2f", fg.min, fg.median, fg.max);
      std::printf("%-*s %7.1fM %9.1f %8.1f %24s %22s %18s %10.1f %18s%s%s\n", label_width,
                  row.label.c_str(), vs[s]->model->info().n_params / 1e6, bytes / 1e6,
                  (step_bytes(*vs[s]) - bytes) / 1e6, pre_s, dec_s, fr_s,
                  prompt_flops * p.median / prompt_len / 1e9, fg_s,
                  sets[s].label.empty() ? "" : " ", sets[s].label.c_str());
    }
  }
  if (want_crossover && !dtypes.empty()) crossover(backend, params, dtypes);
  return 0;
}

}  // namespace sy::cli
