// switchyard bench-backend: prefill and decode tokens/s of one sequence on a backend, and the
// fraction of measured memory bandwidth decode achieves (weight bytes per token x tokens/s /
// copy bandwidth; for a GPU backend, / the device's streaming bandwidth). Run, not a test:
// numbers depend on the machine.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <sstream>
#include <thread>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "engine/variant.h"
#include "host/host_api.h"
#include "model/generator.h"

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

// Streaming read bandwidth: every core sums its share of a buffer far larger than the caches.
double read_bandwidth() {
  const size_t n = (512u << 20) / sizeof(uint64_t);
  std::vector<uint64_t> a(n, 1);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    std::vector<uint64_t> sums(threads);
    const int64_t t0 = now_ns();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (size_t i = n * t / threads; i + 4 <= n * (t + 1) / threads; i += 4) {
          s0 += a[i]; s1 += a[i + 1]; s2 += a[i + 2]; s3 += a[i + 3];
        }
        sums[t] = s0 + s1 + s2 + s3;
      });
    for (auto& th : pool) th.join();
    const double s = (now_ns() - t0) / 1e9;
    if (std::accumulate(sums.begin(), sums.end(), uint64_t{0}) == 0) return 0;  // keeps the loads
    best = std::max(best, n * sizeof(uint64_t) / s);
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

struct Figures {
  double prefill_tps = 0, decode_tps = 0;
};

Figures measure(engine::Variant& v, uint32_t prompt_len, uint32_t decode_tokens) {
  auto& m = *v.model;
  std::vector<int32_t> blocks;
  const uint32_t total = prompt_len + decode_tokens;
  if (!v.cache->pool().allocate(v.cache->blocks_for(total), blocks))
    throw std::runtime_error("KV cache too small for the benchmark");
  std::vector<int32_t> prompt(prompt_len);
  for (uint32_t i = 0; i < prompt_len; ++i) prompt[i] = 3 + (i * 7) % 256;
  model::SeqInput in{prompt.data(), prompt_len, 0, &blocks, true};
  m.forward({in}, *v.cache);  // warm-up: primitives, pages, caches
  Figures f;
  int64_t t0 = now_ns();
  auto logits = m.forward({in}, *v.cache);
  f.prefill_tps = prompt_len / ((now_ns() - t0) / 1e9);
  int32_t tok = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  t0 = now_ns();
  for (uint32_t i = 0; i < decode_tokens; ++i) {
    model::SeqInput d{&tok, 1, prompt_len + i, &blocks, true};
    logits = m.forward({d}, *v.cache);
    tok = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  f.decode_tps = decode_tokens / ((now_ns() - t0) / 1e9);
  v.cache->pool().release(blocks);
  return f;
}

}  // namespace

int cmd_bench_backend(int argc, char** argv) {
  Args a(argc, argv, 2, {"backend", "dtypes", "preset", "prompt-len", "decode-tokens", "models-dir", "threads"},
         {"help"});
  if (a.has("help")) {
    std::printf("usage: switchyard bench-backend [--backend cpu_onednn] [--dtypes f32,q8_0] [--preset dense-100m]\n"
                "                                [--prompt-len 256] [--decode-tokens 32] [--models-dir models]\n");
    return 0;
  }
  const std::string backend = a.str("backend", "cpu_onednn"), preset = a.str("preset", "dense-100m");
  const uint32_t prompt_len = static_cast<uint32_t>(a.integer("prompt-len", 256));
  const uint32_t decode_tokens = static_cast<uint32_t>(a.integer("decode-tokens", 32));
  std::vector<std::string> dtypes;
  std::stringstream ss(a.str("dtypes", "f32,q8_0"));
  for (std::string d; std::getline(ss, d, ',');) dtypes.push_back(d);

  const double bw = copy_bandwidth(), rbw = read_bandwidth();
  std::printf("memcpy bandwidth: %.2f GB/s copied (%.2f GB/s read+write); streaming read: %.2f GB/s\n",
              bw / 1e9, 2 * bw / 1e9, rbw / 1e9);
  double device_bw = 0;  // set for a GPU backend, whose fractions are of its own bandwidth
  for (size_t i = 0; i < dtypes.size(); ++i) {
    const std::string& dt = dtypes[i];
    Config cfg;
    cfg.model.path = a.str("models-dir", "models") + "/" + preset + "-" + dt + ".gguf";
    cfg.model.generate = preset;
    cfg.models_dir = a.str("models-dir", "models");
    cfg.model.dtype = dt;
    cfg.backend.plugin = backend;
    if (a.has("threads")) cfg.backend.params.emplace_back("threads", a.str("threads"));
    cfg.scheduler.plugin = "fixed_window";
    cfg.engine.max_seqs = 1;
    cfg.engine.max_context = prompt_len + decode_tokens + 16;
    auto v = engine::Variant::build(cfg);
    if (i == 0) {
      if (v->backend->device().kind == SY_DEVICE_GPU) {
        device_bw = device_stream_bandwidth(*v->backend);
        std::printf("%s: %s, streaming (add): %.2f GB/s\n", v->backend_plugin->name().c_str(),
                    v->backend->device().name, device_bw / 1e9);
      }
      std::printf("%-6s %-10s %8s %10s %12s %12s %12s", "dtype", "backend", "params", "MB/token",
                  "prefill t/s", "decode t/s", device_bw ? "frac device" : "frac memcpy");
      std::printf(device_bw ? "\n" : " %12s\n", "frac read");
    }
    const Figures f = measure(*v, prompt_len, decode_tokens);
    const double bytes = static_cast<double>(v->model->info().bytes_per_token);
    std::printf("%-6s %-10s %7.1fM %10.1f %12.1f %12.2f %12.2f", dt.c_str(), backend.c_str(),
                v->model->info().n_params / 1e6, bytes / 1e6,
                f.prefill_tps, f.decode_tps, bytes * f.decode_tps / (device_bw ? device_bw : bw));
    if (device_bw)
      std::printf("\n");
    else
      std::printf(" %12.2f\n", bytes * f.decode_tps / rbw);
  }
  return 0;
}

}  // namespace sy::cli
