// The embedded default of `switchyard bench` (no --config): a memory-bound dense/hybrid pair of
// equal total parameters from the families users run (qwen3-20m, Qwen3-shaped, ~24M parameters:
// a decode step streams ~97 MB of weights, so a batch of 8 decodes costs little more than one;
// qwen35moe-20m, Qwen3.5-MoE-shaped: gated delta nets and gated attention 3:1, 16 experts top 2
// and a shared one, ~13.5M active), each under the original and the optimized
// scheduler, on a mixed workload where half the requests share a system prompt. An automatic
// sweep drives every variant past its saturation; the report's headline is each variant's knee
// (max request throughput with TTFT / TPOT p99 inside the SLO) and optimized over original per
// model. Sized for about 3 minutes on 2 quiet cores. A variant whose model preset or scheduler
// plugin is not built yet is skipped with its reason.
#pragma once

namespace sy::bench {

constexpr const char* kDefaultCompareOrigin = "<embedded default>";

// One backend thread: on two cores shared with the driver (and often other work), an OpenMP
// team of two stalls whenever the other core is busy; measured 5x slower per request here.
// The same engine limits for every variant; the original keeps its static batches of 8.
constexpr const char* kDefaultCompare = R"(log_level = "warn"

[workload]                  # the main run (the Serving and Engine tables)
seed = 1
requests = 24
arrival = "gamma"
rate = 4.0
burstiness = 0.5            # burstier than Poisson
simple_ratio = 0.6
shared_prefix_ratio = 0.5
shared_prefix_len = 128

[workload.simple]
prompt_len = { dist = "uniform", min = 8, max = 48 }
output_len = { dist = "uniform", min = 4, max = 16 }

[workload.complex]
prompt_len = { dist = "bimodal", short = [32, 96], long = [192, 384], long_fraction = 0.25 }
output_len = { dist = "normal", mean = 32, std = 8, min = 16, max = 64 }

[slo]
ttft_ms = 1000
tpot_ms = 100

[sweep]                     # automatic: x2 per point from 1.5 req/s until throughput stops rising
start = 1.5
factor = 2.0
seconds = 4                 # rate x 4 s requests per point, between 8 and 64: an overload
min_requests = 8            # must last long enough for its queue to show in TTFT
requests = 64
refine = 2                  # then two points bisecting between the knee and the first miss
percentile = 99

[run]
timeout_s = 60
warmup_requests = 2

[[variants]]
name = "dense/original"
[variants.model]
path = "models/qwen3-20m.gguf"
generate = "qwen3-20m"
seed = 7
[variants.backend]
plugin = "cpu_onednn"
threads = 1
[variants.scheduler]
plugin = "fixed_window"
max_batch = 8
wait_window_ms = 5
[variants.engine]
max_seqs = 32

[[variants]]
name = "dense/optimized"
[variants.model]
path = "models/qwen3-20m.gguf"
generate = "qwen3-20m"
seed = 7
[variants.backend]
plugin = "cpu_onednn"
threads = 1
[variants.scheduler]
plugin = "dynamic"
[variants.engine]
max_seqs = 32
prefix_caching = true

[[variants]]
name = "hybrid/original"
[variants.model]
path = "models/qwen35moe-20m.gguf"
generate = "qwen35moe-20m"
seed = 7
[variants.backend]
plugin = "cpu_onednn"
threads = 1
[variants.scheduler]
plugin = "fixed_window"
max_batch = 8
wait_window_ms = 5
[variants.engine]
max_seqs = 32

[[variants]]
name = "hybrid/optimized"
[variants.model]
path = "models/qwen35moe-20m.gguf"
generate = "qwen35moe-20m"
seed = 7
[variants.backend]
plugin = "cpu_onednn"
threads = 1
[variants.scheduler]
plugin = "dynamic"
[variants.engine]
max_seqs = 32
prefix_caching = true       # on the hybrid too: recurrent-state snapshots at block boundaries
)";

}  // namespace sy::bench
