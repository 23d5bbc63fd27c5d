#include "bench/metrics.h"

#include <algorithm>
#include <cmath>

#include "bench/counters.h"

namespace sy::bench {

std::vector<double> LatencySamples::tpot_multi_token() const {
  std::vector<double> v;
  for (size_t i = 0; i < tpot.size(); ++i)
    if (output_len[i] > 1) v.push_back(tpot[i]);
  return v;
}

LatencySamples latency_samples(const RunLog& log,
                               const std::function<bool(const RequestRecord&)>& keep) {
  LatencySamples s;
  for (const auto& r : log.requests) {
    if ((keep && !keep(r)) || !r.ok || r.token_ns.empty()) continue;
    const size_t n = r.token_ns.size();
    const double first = (r.token_ns.front() - r.arrival_ns) / 1e6;
    const double latency = (r.token_ns.back() - r.arrival_ns) / 1e6;
    s.ttft.push_back(first);
    s.e2el.push_back(latency);
    s.tpot.push_back(n > 1 ? (latency - first) / (n - 1) : 0.0);
    s.output_len.push_back(n);
    for (size_t i = 1; i < n; ++i) s.itl.push_back((r.token_ns[i] - r.token_ns[i - 1]) / 1e6);
  }
  return s;
}

ServingMetrics serving_metrics(const RunLog& log, const Slo& slo,
                               const std::function<bool(const RequestRecord&)>& keep) {
  ServingMetrics m;
  int64_t end = 0;
  for (const auto& r : log.requests)
    if (r.ok && !r.token_ns.empty()) end = std::max(end, r.token_ns.back());
  if (end == 0) end = log.end_ns;
  m.duration_s = (end - log.start_ns) / 1e9;
  std::vector<std::pair<int64_t, int>> events;  // sweep line: (time, +1 start / -1 end)
  std::map<int64_t, size_t> buckets;            // tokens per whole second since the start
  for (const auto& r : log.requests) {
    if (keep && !keep(r)) continue;
    if (!r.ok || r.token_ns.empty()) {
      ++m.failed;
      continue;
    }
    ++m.completed;
    m.total_input += r.prompt_len;
    m.total_output += r.token_ns.size();
    events.emplace_back(r.arrival_ns, 1);
    events.emplace_back(r.token_ns.back(), -1);
    for (int64_t t : r.token_ns) ++buckets[(t - log.start_ns) / 1'000'000'000];
  }
  const LatencySamples s = latency_samples(log, keep);
  for (size_t i = 0; i < s.ttft.size(); ++i)
    if ((!slo.ttft_ms || s.ttft[i] <= *slo.ttft_ms) &&
        (!slo.tpot_ms || s.tpot[i] <= *slo.tpot_ms) && (!slo.e2el_ms || s.e2el[i] <= *slo.e2el_ms))
      ++m.good_requests;
  if (m.duration_s > 0) {
    m.request_throughput = m.completed / m.duration_s;
    m.output_throughput = m.total_output / m.duration_s;
    m.total_token_throughput = (m.total_input + m.total_output) / m.duration_s;
    if (slo.any()) m.request_goodput = m.good_requests / m.duration_s;
  }
  // Ends sort before starts at the same instant, as vLLM's tuple sort does.
  std::sort(events.begin(), events.end());
  int cur = 0;
  for (const auto& e : events) {
    cur += e.second;
    m.max_concurrent_requests = std::max<uint32_t>(m.max_concurrent_requests, cur);
  }
  for (const auto& [sec, n] : buckets)
    m.max_output_tokens_per_s = std::max<double>(m.max_output_tokens_per_s, n);
  m.ttft_ms = summarize(s.ttft);
  m.tpot_ms = summarize(s.tpot_multi_token());
  m.itl_ms = summarize(s.itl);
  m.e2el_ms = summarize(s.e2el);
  return m;
}

std::vector<CostFit> cost_fit(const std::vector<StepRecord>& steps, double& error) {
  std::vector<CostFit> out;
  for (uint32_t lo : {1u, 2u, 5u, 17u, 65u, 257u})
    out.push_back({lo, lo == 257 ? UINT32_MAX : (lo == 1 ? 1 : lo * 4 - 4), 0, 0, 0});
  double err = 0;
  size_t n = 0;
  for (const StepRecord& s : steps) {
    if (s.n_tokens == 0 || s.exec_ns <= 0 || s.predicted_ns <= 0) continue;
    for (CostFit& b : out)
      if (s.n_tokens >= b.min_tokens && s.n_tokens <= b.max_tokens) {
        ++b.steps;
        b.measured_ms += s.exec_ns / 1e6;
        b.predicted_ms += s.predicted_ns / 1e6;
      }
    err += std::fabs(double(s.predicted_ns - s.exec_ns)) / double(s.exec_ns);
    ++n;
  }
  for (CostFit& b : out)
    if (b.steps) b.measured_ms /= b.steps, b.predicted_ms /= b.steps;
  std::erase_if(out, [](const CostFit& b) { return b.steps == 0; });
  error = n ? err / n : 0;
  return out;
}

EngineMetrics engine_metrics(const RunLog& log, uint64_t active_params) {
  EngineMetrics e;
  std::vector<double> batch;
  double weighted = 0;
  for (size_t i = 0; i < log.steps.size(); ++i) {
    const StepRecord& s = log.steps[i];
    const int64_t next = i + 1 < log.steps.size() ? log.steps[i + 1].t_ns : log.end_ns;
    weighted += double(s.n_waiting) * (next - s.t_ns);
    e.queue_max = std::max(e.queue_max, s.n_waiting);
    if (s.n_seqs == 0) {
      ++e.empty_steps;
      continue;
    }
    ++e.steps;
    e.busy_s += s.dur_ns / 1e9;
    ++e.batch_hist[s.n_seqs];
    batch.push_back(s.n_seqs);
    e.prefill_tokens += s.n_prefill_tokens;
    e.decode_tokens += s.n_decode;
  }
  e.cost_fit = cost_fit(log.steps, e.cost_fit_error);
  if (!log.steps.empty() && log.end_ns > log.steps.front().t_ns)
    e.queue_mean = weighted / (log.end_ns - log.steps.front().t_ns);
  if (log.end_ns > log.start_ns) e.utilization = e.busy_s / ((log.end_ns - log.start_ns) / 1e9);
  e.batch_size = summarize(batch);
  std::vector<double> cost;
  double flops = 0;
  size_t done = 0;
  for (const auto& r : log.requests) {
    e.preemptions += r.preemptions;
    if (!r.ok) continue;
    ++done;
    ++e.path_requests[r.path];
    cost.push_back(r.cost_ns / 1e6);
    flops += 2.0 * double(active_params) * double(r.prompt_len + r.token_ns.size());
  }
  if (done) e.flops_per_request = flops / done;
  e.cost_ms = summarize(cost);
  e.memory = log.memory;

  const EngineCounters c = read_counters(log.counters);
  if (c.prefix_query_tokens && *c.prefix_query_tokens > 0 && c.prefix_hit_tokens)
    e.prefix_cache_hit_rate = *c.prefix_hit_tokens / *c.prefix_query_tokens;
  // A key another variant created reads 0 here: only time actually spent routing is a share.
  if (c.routing_ns && *c.routing_ns > 0 && e.busy_s > 0)
    e.routing_time_share = *c.routing_ns / (e.busy_s * 1e9);
  if (c.overlap_hidden_ns && *c.overlap_hidden_ns > 0 && e.busy_s > 0)
    e.overlap_hidden_share = *c.overlap_hidden_ns / (e.busy_s * 1e9);
  if (!c.expert_activations.empty()) {
    ExpertActivation x;
    x.counts = c.expert_activations;
    x.min_share = 1;
    for (const auto& [layer, v] : x.counts) {
      double total = 0;
      for (double n : v) total += n;
      for (double n : v) {
        const double share = total > 0 ? n / total : 0;
        x.max_share = std::max(x.max_share, share);
        x.min_share = std::min(x.min_share, share);
      }
    }
    e.experts = x;
  }
  return e;
}

}  // namespace sy::bench
