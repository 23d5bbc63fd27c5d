// Metrics of one replay, defined as `vllm bench serve` defines them (vllm/benchmarks/serve.py,
// calculate_metrics), computed from the event log:
//   TTFT  = first token time - arrival            (per request)
//   E2EL  = last token time - arrival             (per request)
//   TPOT  = (E2EL - TTFT) / (output_len - 1)      (requests with output_len > 1; 0 for goodput)
//   ITL   = gaps between successive tokens        (pooled over all requests)
//   duration = last token of any request - start of the run
//   request/output/total-token throughput = completed, output tokens, in+out tokens / duration
//   goodput = requests meeting every configured SLO (metric <= slo) / duration
// Arrival is the scheduled arrival time, so time a request spent before the engine saw it is
// queueing, as a client measures it. Only requests that finished normally count ("completed").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "bench/events.h"
#include "bench/stats.h"

namespace sy::bench {

struct Slo {  // goodput SLOs in milliseconds; unset ones are not checked
  std::optional<double> ttft_ms, tpot_ms, e2el_ms;
  bool any() const { return ttft_ms || tpot_ms || e2el_ms; }
};

struct ServingMetrics {
  size_t completed = 0, failed = 0;
  uint64_t total_input = 0, total_output = 0;
  double duration_s = 0;
  double request_throughput = 0, output_throughput = 0, total_token_throughput = 0;
  std::optional<double> request_goodput;  // set when any SLO is
  size_t good_requests = 0;
  double max_output_tokens_per_s = 0;    // most tokens produced in one 1-second bucket
  uint32_t max_concurrent_requests = 0;  // sweep line over [arrival, last token]
  Summary ttft_ms, tpot_ms, itl_ms, e2el_ms;
};

// Per-request latencies (ms) of the completed requests that `keep` selects, in log order.
struct LatencySamples {
  std::vector<double> ttft, e2el;
  std::vector<double> tpot;  // 0 where output_len is 1 (vLLM counts those as meeting a TPOT SLO)
  std::vector<size_t> output_len;
  std::vector<double> itl;                       // pooled gaps between successive tokens
  std::vector<double> tpot_multi_token() const;  // TPOT of requests with output_len > 1
};
LatencySamples latency_samples(const RunLog& log,
                               const std::function<bool(const RequestRecord&)>& keep = {});

// `keep` selects a subset of requests (a class); duration is always the whole run's.
ServingMetrics serving_metrics(const RunLog& log, const Slo& slo,
                               const std::function<bool(const RequestRecord&)>& keep = {});

struct ExpertActivation {
  // layer -> activations per expert; share = activations / the layer's total
  std::map<uint32_t, std::vector<double>> counts;
  double max_share = 0, min_share = 0;  // over all layers and experts
};

// Engine-side metrics. Optional fields come from counters a component publishes (see
// core/bench/README.md); they stay empty, and print as n/a, when nothing publishes them.
// The cost model against the forward passes it predicted, for steps of a range of sizes
// (tokens a step carried).
struct CostFit {
  uint32_t min_tokens = 0, max_tokens = 0;
  size_t steps = 0;
  double measured_ms = 0, predicted_ms = 0;  // means over those steps
};

struct EngineMetrics {
  size_t steps = 0, empty_steps = 0;   // steps that ran a batch; steps that ran nothing
  double busy_s = 0, utilization = 0;  // time in steps that ran a batch; busy_s / duration
  double queue_mean = 0;               // waiting requests, time-weighted over the run
  uint32_t queue_max = 0;
  std::map<uint32_t, size_t> batch_hist;  // batch size (sequences) -> steps
  Summary batch_size;
  uint64_t prefill_tokens = 0, decode_tokens = 0;
  uint32_t preemptions = 0;
  std::map<uint32_t, size_t> path_requests;  // path tag -> completed requests
  double flops_per_request = 0;              // mean of 2 * active params * (prompt + output) tokens
  Summary cost_ms;                           // attributed busy time per completed request
  MemoryPeaks memory;
  std::optional<double> prefix_cache_hit_rate;  // hit tokens / query tokens
  std::optional<double> routing_time_share;     // routing ns / busy ns
  // Overlapped stepping: host planning hidden behind forward passes, as a share of busy time.
  std::optional<double> overlap_hidden_share;
  std::optional<ExpertActivation> experts;
  std::vector<CostFit> cost_fit;  // by step size: 1, 2-4, 5-16, 17-64, 65-256, 257+ tokens
  double cost_fit_error = 0;      // mean |predicted - measured| / measured over every step
};

// Steps bucketed by size, measured forward time against the cost model's prediction.
std::vector<CostFit> cost_fit(const std::vector<StepRecord>& steps, double& mean_rel_error);
EngineMetrics engine_metrics(const RunLog& log, uint64_t active_params);

}  // namespace sy::bench
