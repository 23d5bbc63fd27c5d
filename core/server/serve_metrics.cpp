#include "server/serve_metrics.h"

#include <cctype>

#include "server/openai_response.h"
#include "server/shadow.h"

namespace sy::server {
namespace {

const std::string P = "switchyard:";

// vLLM's buckets (vllm/v1/metrics/loggers.py).
const std::vector<double> kTtft = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                   0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                   20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
const std::vector<double> kItl = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                  0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
const std::vector<double> kRequest = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                      5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                      60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
const std::vector<double> kStep = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                   0.1,    0.25,  0.5,    1,     2.5,  5,     10};
const std::vector<double> kBatchSeqs = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
const std::vector<double> kBatchTokens = {1,   2,   4,    8,    16,   32,   64,   128,
                                          256, 512, 1024, 2048, 4096, 8192, 16384};
const std::vector<double> kDivergence = {0,  1,   2,   4,   8,    16,   32,
                                         64, 128, 256, 512, 1024, 2048, 4096};
const std::vector<double> kLatencyDiff = {-10,   -5,     -2.5,  -1, -0.5, -0.25, -0.1,
                                          -0.05, -0.025, -0.01, 0,  0.01, 0.025, 0.05,
                                          0.1,   0.25,   0.5,   1,  2.5,  5,     10};

std::string sanitize(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

}  // namespace

ServeMetrics::ServeMetrics(std::string model_name, uint32_t max_context_hint)
    : model_(std::move(model_name)) {
  auto& r = reg_;
  r.define_gauge(P + "num_requests_running", "Number of requests in model execution batches.");
  r.define_gauge(P + "num_requests_waiting", "Number of requests waiting to be processed.");
  r.define_gauge(
      P + "queue_depth",
      "Requests accepted but not running: submitted to a variant or waiting in its engine.");
  r.define_gauge(P + "kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.");
  r.define_gauge(P + "variant_info", "Loaded variants (1 each); state is active or draining.");
  r.define_gauge(P + "variant_weight",
                 "Traffic weight of each active variant (after a rollback: the baseline only).");
  r.define_counter(P + "prompt_tokens", "Number of prefill tokens processed.");
  r.define_counter(P + "generation_tokens", "Number of generation tokens processed.");
  r.define_counter(P + "request_success", "Count of finished requests, by finish reason.");
  r.define_counter(P + "request_rejected", "Requests refused before they ran, by reason.");
  r.define_counter(P + "request_timeouts", "Requests aborted by the server's request timeout.");
  r.define_counter(P + "num_preemptions", "Cumulative number of preemptions from the engine.");
  r.define_counter(P + "prefix_cache_queries",
                   "Prefix cache queries, in terms of number of queried tokens.");
  r.define_counter(P + "prefix_cache_hits",
                   "Prefix cache hits, in terms of number of cached tokens.");
  r.define_counter(P + "scheduler_invalid_plans",
                   "Scheduler plans the host refused (it ran its fallback plan).");
  r.define_counter(P + "routing_seconds", "Time spent in the triage router.");
  r.define_counter(
      P + "engine_step_seconds",
      "Time spent in engine steps; routing_seconds over this is the routing time share.");
  r.define_counter(P + "expert_activations", "Tokens routed to each expert of each MoE layer.");
  r.define_counter(P + "host_counter",
                   "Other counters plugins publish through the host (name label).");
  r.define_counter(P + "requests_routed",
                   "Requests sent to each variant as primary, by triage path (the path split).");
  r.define_counter(P + "swaps", "Hot swaps that installed a new variant set.");
  r.define_counter(P + "swap_failures",
                   "Hot swaps refused because the new config failed to parse, load or validate.");
  r.define_counter(P + "shadow_requests", "Shadow runs compared with their primary.");
  r.define_counter(P + "shadow_skipped", "Shadow runs not compared, by reason.");
  r.define_counter(P + "shadow_exact_match", "Shadow runs whose tokens equal the primary's.");
  r.define_counter(P + "shadow_tokens_compared",
                   "Token positions compared between shadow and primary.");
  r.define_counter(
      P + "shadow_tokens_agreed",
      "Token positions where shadow and primary agree (shadow agreement = agreed / compared).");
  r.define_counter(P + "triage_shadowed_light",
                   "Light-path requests whose shadow ran on the full path.");
  r.define_counter(P + "triage_misroutes",
                   "Light-path requests whose tokens differ from their full-path shadow's.");
  r.define_histogram(P + "shadow_first_divergence_position",
                     "Output position of the first token where shadow and primary differ.",
                     kDivergence);
  r.define_histogram(P + "shadow_latency_difference_seconds",
                     "Shadow e2e latency minus the primary's.", kLatencyDiff);
  r.define_histogram(P + "time_to_first_token_seconds",
                     "Histogram of time to first token in seconds.", kTtft);
  r.define_histogram(P + "inter_token_latency_seconds",
                     "Histogram of inter-token latency in seconds.", kItl);
  r.define_histogram(P + "request_time_per_output_token_seconds",
                     "Histogram of time_per_output_token_seconds per request.", kItl);
  r.define_histogram(P + "e2e_request_latency_seconds",
                     "Histogram of e2e request latency in seconds.", kRequest);
  r.define_histogram(P + "request_queue_time_seconds",
                     "Histogram of time spent in WAITING phase for request.", kRequest);
  r.define_histogram(P + "request_inference_time_seconds",
                     "Histogram of time spent in RUNNING phase for request.", kRequest);
  r.define_histogram(P + "request_prefill_time_seconds",
                     "Histogram of time spent in PREFILL phase for request.", kRequest);
  r.define_histogram(P + "request_decode_time_seconds",
                     "Histogram of time spent in DECODE phase for request.", kRequest);
  r.define_histogram(P + "request_prompt_tokens", "Number of prefill tokens processed.",
                     buckets_1_2_5(max_context_hint));
  r.define_histogram(P + "request_generation_tokens", "Number of generation tokens processed.",
                     buckets_1_2_5(max_context_hint));
  r.define_histogram(P + "iteration_tokens_total", "Histogram of number of tokens per engine_step.",
                     kBatchTokens);
  r.define_histogram(P + "batch_size",
                     "Histogram of sequences per engine step (the batch size distribution).",
                     kBatchSeqs);
  r.define_histogram(P + "batch_forward_duration_seconds",
                     "Engine step time by batch kind (prefill, decode, mixed).", kStep);
}

void ServeMetrics::on_step(const std::string& variant, const engine::StepStats& st,
                           int64_t step_ns) {
  const Labels l = labels(variant);
  reg_.observe(P + "iteration_tokens_total", l, st.n_tokens);
  reg_.observe(P + "batch_size", l, st.n_seqs);
  reg_.inc(P + "engine_step_seconds", l, step_ns / 1e9);
  const char* method = st.n_decode == 0 ? "prefill" : st.n_prefill_tokens == 0 ? "decode" : "mixed";
  Labels lm = l;
  lm.emplace_back("method", method);
  reg_.observe(P + "batch_forward_duration_seconds", lm, step_ns / 1e9);
}

void ServeMetrics::on_token(const std::string& variant, const engine::Request& r) {
  const Labels l = labels(variant);
  reg_.inc(P + "generation_tokens", l);
  const size_t n = r.token_ns.size();
  if (n == 1)
    reg_.observe(P + "time_to_first_token_seconds", l, (r.token_ns[0] - r.arrival_ns) / 1e9);
  else if (n > 1)
    reg_.observe(P + "inter_token_latency_seconds", l,
                 (r.token_ns[n - 1] - r.token_ns[n - 2]) / 1e9);
}

void ServeMetrics::on_finish(const std::string& variant, const Outcome& o) {
  const Labels l = labels(variant);
  Labels lr = l;
  // vLLM's label values: stop, length, abort (clients never see "abort": they get an error).
  lr.emplace_back("finished_reason", o.reason == engine::FinishReason::aborted
                                         ? "abort"
                                         : openai_finish_reason(o.reason));
  reg_.inc(P + "request_success", lr);
  reg_.inc(P + "prompt_tokens", l, o.prompt_tokens);
  reg_.observe(P + "request_prompt_tokens", l, o.prompt_tokens);
  reg_.observe(P + "request_generation_tokens", l, o.tokens.size());
  reg_.observe(P + "e2e_request_latency_seconds", l, (o.finish_ns - o.arrival_ns) / 1e9);
  if (!o.first_scheduled_ns) return;  // never ran: no phase times
  reg_.observe(P + "request_queue_time_seconds", l, (o.first_scheduled_ns - o.arrival_ns) / 1e9);
  reg_.observe(P + "request_inference_time_seconds", l, (o.finish_ns - o.first_scheduled_ns) / 1e9);
  if (o.token_ns.empty()) return;
  reg_.observe(P + "request_prefill_time_seconds", l,
               (o.token_ns.front() - o.first_scheduled_ns) / 1e9);
  reg_.observe(P + "request_decode_time_seconds", l, (o.finish_ns - o.token_ns.front()) / 1e9);
  if (o.token_ns.size() > 1)
    reg_.observe(P + "request_time_per_output_token_seconds", l,
                 (o.token_ns.back() - o.token_ns.front()) / 1e9 / (o.token_ns.size() - 1));
}

void ServeMetrics::rejected(const std::string& variant, const std::string& reason) {
  Labels l = labels(variant);
  l.emplace_back("reason", reason);
  reg_.inc(P + "request_rejected", l);
}

void ServeMetrics::timed_out(const std::string& variant) {
  reg_.inc(P + "request_timeouts", labels(variant));
}

void ServeMetrics::routed(const std::string& variant, uint32_t path) {
  Labels l = labels(variant);
  l.emplace_back("path", path == 0 ? "full" : "light");
  reg_.inc(P + "requests_routed", l);
}

void ServeMetrics::swap(bool ok) {
  reg_.inc(P + (ok ? "swaps" : "swap_failures"), {{"model_name", model_}});
}

void ServeMetrics::shadow_skipped(const std::string& shadow, const std::string& reason) {
  reg_.inc(P + "shadow_skipped", {{"model_name", model_}, {"shadow", shadow}, {"reason", reason}});
}

void ServeMetrics::shadow_compared(const std::string& primary, const std::string& shadow,
                                   const ShadowResult& r) {
  const Labels l = {{"model_name", model_}, {"variant", primary}, {"shadow", shadow}};
  reg_.inc(P + "shadow_requests", l);
  if (r.exact) reg_.inc(P + "shadow_exact_match", l);
  reg_.inc(P + "shadow_tokens_compared", l, r.compared);
  reg_.inc(P + "shadow_tokens_agreed", l, r.agreed);
  if (r.first_divergence >= 0)
    reg_.observe(P + "shadow_first_divergence_position", l, r.first_divergence);
  reg_.observe(P + "shadow_latency_difference_seconds", l, r.latency_diff_s);
  if (r.light_vs_full) reg_.inc(P + "triage_shadowed_light", l);
  if (r.misroute) reg_.inc(P + "triage_misroutes", l);
}

std::string ServeMetrics::render(const std::vector<RunnerSnapshot>& live) {
  struct Sum {
    double running = 0, waiting = 0, queued = 0, used = 0, total = 0;
  };
  std::map<std::string, Sum> by;
  std::map<std::string, std::map<std::string, double>> counters;  // per variant
  for (const auto& s : live) {
    for (const auto& [name, value] : s.counters) counters[s.variant][name] += value;
    Sum& t = by[s.variant];
    t.running += s.running;
    t.waiting += s.waiting;
    t.queued += s.waiting + s.pending;
    t.used += s.kv_used;
    t.total += s.kv_total;
  }
  for (const char* g :
       {"num_requests_running", "num_requests_waiting", "queue_depth", "kv_cache_usage_perc"})
    reg_.clear(P + g);
  for (const auto& [v, t] : by) {
    const Labels l = labels(v);
    reg_.set(P + "num_requests_running", l, t.running);
    reg_.set(P + "num_requests_waiting", l, t.waiting);
    reg_.set(P + "queue_depth", l, t.queued);
    reg_.set(P + "kv_cache_usage_perc", l, t.total ? t.used / t.total : 0);
  }
  // Each engine keeps its own counters: one series per variant.
  for (const char* c :
       {"num_preemptions", "prefix_cache_queries", "prefix_cache_hits", "scheduler_invalid_plans",
        "routing_seconds", "expert_activations", "host_counter"})
    reg_.clear(P + c);
  for (const auto& [variant, values] : counters) {
    const Labels m = labels(variant);
    auto with = [&](Labels l, const char* k, const std::string& v) {
      l.emplace_back(k, v);
      return l;
    };
    for (const auto& [name, value] : values) {
      if (name == "num_preemptions" || name == "scheduler_invalid_plans")
        reg_.set(P + name, m, value);
      else if (name == "prefix_cache_query_tokens")
        reg_.set(P + "prefix_cache_queries", m, value);
      else if (name == "prefix_cache_hit_tokens")
        reg_.set(P + "prefix_cache_hits", m, value);
      else if (name == "routing_ns")
        reg_.set(P + "routing_seconds", m, value / 1e9);
      else if (name.rfind("expert_activations.", 0) == 0) {
        const std::string rest = name.substr(19);
        const size_t dot = rest.find('.');
        if (dot == std::string::npos) continue;
        reg_.set(P + "expert_activations",
                 with(with(m, "layer", rest.substr(0, dot)), "expert", rest.substr(dot + 1)),
                 value);
      } else {
        reg_.set(P + "host_counter", with(m, "name", sanitize(name)), value);
      }
    }
  }
  return reg_.render();
}

}  // namespace sy::server
