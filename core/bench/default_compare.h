// The embedded default of `switchyard bench` (no --config): small generated dense and hybrid
// models; dense/original, hybrid/original and hybrid/optimized on one mixed workload, sized to
// finish in under 5 minutes on 2 cores. A variant whose model preset or scheduler plugin is not
// built yet is skipped with its reason, and picked up once it lands.
#pragma once

namespace sy::bench {

constexpr const char* kDefaultCompareOrigin = "<embedded default>";

// One backend thread: on two cores shared with the driver (and often other work), an OpenMP
// team of two stalls whenever the other core is busy; measured 5x slower per request here.
constexpr const char* kDefaultCompare = R"(log_level = "warn"

[workload]
seed = 1
requests = 64
arrival = "gamma"
rate = 8.0
burstiness = 0.5            # burstier than Poisson
simple_ratio = 0.6
shared_prefix_ratio = 0.3
shared_prefix_len = 32

[workload.simple]
prompt_len = { dist = "uniform", min = 8, max = 48 }
output_len = { dist = "uniform", min = 4, max = 16 }

[workload.complex]
prompt_len = { dist = "bimodal", short = [32, 96], long = [192, 384], long_fraction = 0.25 }
output_len = { dist = "uniform", min = 16, max = 40 }

[slo]
ttft_ms = 500
tpot_ms = 50

[sweep]
rates = [3.0, 6.0, 12.0, 18.0]
requests = 32

[capacity]
target_rate = 32.0
metric = "ttft"
percentile = 90
slo_ms = 500
requests = 48

[run]
timeout_s = 60
warmup_requests = 2

[[variants]]
name = "dense/original"
[variants.model]
path = "models/dense-small.gguf"
generate = "dense-small"
seed = 7
[variants.backend]
plugin = "cpu_onednn"
threads = 1
[variants.scheduler]
plugin = "fixed_window"
max_batch = 8
wait_window_ms = 5
[variants.engine]
max_seqs = 16

[[variants]]
name = "hybrid/original"
[variants.model]
path = "models/hybrid-small.gguf"
generate = "hybrid-small"
seed = 7
[variants.backend]
plugin = "cpu_onednn"
threads = 1
[variants.scheduler]
plugin = "fixed_window"
max_batch = 8
wait_window_ms = 5
[variants.engine]
max_seqs = 16

[[variants]]
name = "hybrid/optimized"
[variants.model]
path = "models/hybrid-small.gguf"
generate = "hybrid-small"
seed = 7
[variants.backend]
plugin = "cpu_onednn"
threads = 1
[variants.scheduler]
plugin = "dynamic"
[variants.engine]
max_seqs = 16
)";

}  // namespace sy::bench
