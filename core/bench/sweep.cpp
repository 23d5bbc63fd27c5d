#include "bench/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace sy::bench {
namespace {

std::string num(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

}  // namespace

bool meets_slo(const SweepPoint& p, const Slo& slo) {
  if (p.serving.completed == 0) return false;
  if (slo.ttft_ms && !(p.ttft_ms <= *slo.ttft_ms)) return false;
  if (slo.tpot_ms && !(p.tpot_ms <= *slo.tpot_ms)) return false;
  if (slo.e2el_ms && !(p.e2el_ms <= *slo.e2el_ms)) return false;
  return true;
}

Knee find_knee(const std::vector<SweepPoint>& points) {
  Knee k;
  for (const auto& p : points)
    if (p.meets_slo && (!k.found || p.serving.request_throughput > k.throughput)) {
      k.found = true;
      k.rate = p.rate;
      k.throughput = p.serving.request_throughput;
      k.ttft_ms = p.ttft_ms;
    }
  return k;
}

uint32_t SweepPlanner::requests_at(double rate) const {
  if (spec_.seconds <= 0) return spec_.requests;
  const double n = std::ceil(rate * spec_.seconds);
  return static_cast<uint32_t>(
      std::clamp<double>(n, spec_.min_requests, std::max(spec_.min_requests, spec_.requests)));
}

std::optional<double> SweepPlanner::next(const std::vector<SweepPoint>& done) {
  if (!spec_.rates.empty()) {
    if (done.size() < spec_.rates.size()) return spec_.rates[done.size()];
    return std::nullopt;
  }
  if (done.empty()) return spec_.start;
  if (done.size() >= spec_.max_points) return std::nullopt;
  std::vector<const SweepPoint*> by_rate;
  for (const auto& p : done) by_rate.push_back(&p);
  std::sort(by_rate.begin(), by_rate.end(),
            [](const SweepPoint* a, const SweepPoint* b) { return a->rate < b->rate; });
  const Knee knee = find_knee(done);
  if (!knee.found) {  // even the lowest load misses: look lower, twice at most
    if (down_probes_ >= 2) return std::nullopt;
    ++down_probes_;
    return by_rate.front()->rate / (spec_.factor * spec_.factor);
  }
  // Saturated: some point missed the SLO and the highest load carried no more than the best
  // lower one (within min_rise).
  const SweepPoint& top = *by_rate.back();
  double best_below = 0;
  bool missed = false;
  for (const SweepPoint* p : by_rate) {
    missed |= !p->meets_slo;
    if (p != &top) best_below = std::max(best_below, p->serving.request_throughput);
  }
  const bool saturated = missed && by_rate.size() >= 2 &&
                         top.serving.request_throughput <= (1 + spec_.min_rise) * best_below;
  if (!saturated) return top.rate * spec_.factor;
  // Bisect between the knee and the next load up, when that one missed.
  if (refined_ < spec_.refine) {
    for (const SweepPoint* p : by_rate)
      if (p->rate > knee.rate) {
        if (p->meets_slo) break;
        ++refined_;
        return std::sqrt(knee.rate * p->rate);
      }
  }
  return std::nullopt;
}

std::string knee_headline(const std::vector<std::pair<std::string, Knee>>& knees, const Slo& slo,
                          double percentile) {
  const std::string pct = "p" + num("%g", percentile);
  std::string cond;
  if (slo.ttft_ms) cond += "TTFT " + pct + " <= " + num("%g", *slo.ttft_ms) + " ms";
  if (slo.tpot_ms)
    cond += (cond.empty() ? "" : ", ") + ("TPOT " + pct + " <= " + num("%g", *slo.tpot_ms) + " ms");
  if (slo.e2el_ms)
    cond += (cond.empty() ? "" : ", ") + ("E2EL " + pct + " <= " + num("%g", *slo.e2el_ms) + " ms");
  std::string out = "Knee (max request throughput" + (cond.empty() ? "" : " with " + cond) + "):";
  std::map<std::string, std::pair<std::string, Knee>> first;  // name prefix -> its first variant
  bool any = false;
  for (const auto& [name, k] : knees) {
    const std::string group = name.substr(0, name.find('/'));
    out += std::string(any ? ";" : "") + " " + name + " ";
    any = true;
    out += k.found ? num("%.2f req/s", k.throughput) : std::string("none (every load missed)");
    auto [it, inserted] = first.emplace(group, std::make_pair(name, k));
    if (!inserted && k.found && it->second.second.found && it->second.second.throughput > 0)
      out += " (" + num("%.2fx", k.throughput / it->second.second.throughput) + " " +
             it->second.first + ")";
  }
  return out;
}

}  // namespace sy::bench
