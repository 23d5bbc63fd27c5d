#include "bench/workload.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "bench/rng.h"
#include "switchyard/common/error.h"

namespace sy::bench {

uint32_t LengthDist::sample(Rng& rng) const {
  switch (kind) {
    case Kind::fixed:
      return value;
    case Kind::uniform:
      return rng.between(min, max);
    case Kind::normal: {
      const double v = std::round(mean + std * rng.normal());
      return static_cast<uint32_t>(std::clamp(v, double(min), double(max)));
    }
    case Kind::bimodal:
      return rng.chance(long_fraction) ? rng.between(long_min, long_max)
                                       : rng.between(short_min, short_max);
  }
  return value;
}

uint32_t LengthDist::upper() const {
  switch (kind) {
    case Kind::fixed:
      return value;
    case Kind::uniform:
    case Kind::normal:
      return max;
    case Kind::bimodal:
      return std::max(short_max, long_max);
  }
  return value;
}

std::vector<double> arrival_times(uint32_t n, double rate, double b, Rng& rng) {
  std::vector<double> t(n, 0.0);
  if (n == 0 || std::isinf(rate)) return t;
  double acc = 0;
  for (uint32_t i = 0; i < n; ++i) {
    acc += std::isinf(b) ? 1.0 / rate : rng.gamma(b) / (rate * b);
    t[i] = acc;
  }
  const double scale = (n / rate) / t.back();
  for (double& x : t) x *= scale;
  return t;
}

namespace {

struct TraceRow {
  double arrival_s;
  uint32_t prompt_len, output_len;
  bool simple;
};

std::vector<TraceRow> read_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw sy::Error(SY_ERR_NOT_FOUND, path + ": cannot open trace file");
  std::vector<TraceRow> rows;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (line.empty() || line[0] == '#' || line.rfind("arrival_s", 0) == 0) continue;
    std::stringstream ss(line);
    std::string a, p, o, c;
    std::getline(ss, a, ',');
    std::getline(ss, p, ',');
    std::getline(ss, o, ',');
    std::getline(ss, c, ',');
    const std::string where = path + ":" + std::to_string(lineno) + ": ";
    TraceRow r{};
    long pl = 0, ol = 0;
    try {
      r.arrival_s = std::stod(a);
      pl = std::stol(p);
      ol = std::stol(o);
    } catch (const std::exception&) {  // std::stod's and std::stol's
    }
    if (pl < 1 || ol < 1) {
      throw sy::Error(where +
                      "expected 'arrival_s,prompt_len,output_len[,class]' with "
                      "lengths >= 1, got '" +
                      line + "'");
    }
    r.prompt_len = static_cast<uint32_t>(pl);
    r.output_len = static_cast<uint32_t>(ol);
    c.erase(std::remove_if(c.begin(), c.end(), ::isspace), c.end());
    if (c != "" && c != "simple" && c != "complex")
      throw sy::Error(where + "class must be 'simple' or 'complex', got '" + c + "'");
    if (!rows.empty() && r.arrival_s < rows.back().arrival_s)
      throw sy::Error(where + "arrival times must not decrease");
    r.simple = c == "simple";
    rows.push_back(r);
  }
  if (rows.empty()) throw sy::Error(path + ": trace has no requests");
  return rows;
}

}  // namespace

std::vector<WorkItem> generate_workload(const WorkloadSpec& w) {
  // One stream per aspect, so that changing the rate redraws arrivals and nothing else.
  Rng arr(w.seed ^ 0xa11a1u), cls(w.seed ^ 0xc1a55u), len(w.seed ^ 0x1e9u), tok(w.seed ^ 0x7043u);
  std::vector<TraceRow> rows;
  if (w.arrival == WorkloadSpec::Arrival::trace) {
    rows = read_trace(w.trace_path);
    const double t0 = rows.front().arrival_s;
    // A rate > 0 compresses or stretches the trace to that mean rate; 0 replays it as recorded.
    const double span = rows.back().arrival_s - t0;
    const double own = span > 0 ? rows.size() / span : 0;
    const double scale = (own > 0 && w.rate > 0 && !std::isinf(w.rate)) ? own / w.rate : 1.0;
    for (auto& r : rows) r.arrival_s = (r.arrival_s - t0) * scale;
  } else {
    const double b = w.arrival == WorkloadSpec::Arrival::poisson ? 1.0 : w.burstiness;
    const auto t = arrival_times(w.requests, w.rate, b, arr);
    for (uint32_t i = 0; i < w.requests; ++i) {
      const bool simple = cls.chance(w.simple_ratio);
      const ClassSpec& c = simple ? w.simple : w.complex;
      const uint32_t p = c.prompt.sample(len), o = c.output.sample(len);
      rows.push_back({t[i], p, o, simple});
    }
  }
  std::vector<int32_t> prefix(w.shared_prefix_len);
  for (auto& t : prefix) t = static_cast<int32_t>(tok.between(kFirstToken, kEndToken - 1));
  std::vector<WorkItem> items;
  items.reserve(rows.size());
  for (const auto& r : rows) {
    WorkItem it;
    it.arrival_ns = static_cast<int64_t>(r.arrival_s * 1e9);
    it.simple = r.simple;
    it.max_new_tokens = r.output_len;
    it.shared_prefix = w.shared_prefix_len > 0 && cls.chance(w.shared_prefix_ratio);
    if (it.shared_prefix) it.prompt = prefix;
    for (uint32_t j = 0; j < r.prompt_len; ++j)
      it.prompt.push_back(static_cast<int32_t>(tok.between(kFirstToken, kEndToken - 1)));
    items.push_back(std::move(it));
  }
  return items;
}

WorkloadSpec at_rate(WorkloadSpec spec, double rate, uint32_t requests) {
  spec.rate = rate;
  if (spec.arrival != WorkloadSpec::Arrival::trace) spec.requests = requests;
  return spec;
}

}  // namespace sy::bench
