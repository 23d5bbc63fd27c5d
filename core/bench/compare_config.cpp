#include "bench/compare_config.h"

#include <cmath>

#include "bench/http_client.h"
#include "config/toml_reader.h"
#include "config/variants.h"
#include "switchyard/common/error.h"

namespace sy::bench {
namespace {

void read_range(const std::string& origin, const toml::table& t, const char* key,
                const std::string& prefix, uint32_t& lo, uint32_t& hi) {
  const toml::node* n = t.get(key);
  if (!n) return;
  const toml::array* a = n->as_array();
  auto fail = [&] {
    throw ConfigError(where(origin, n->source()) + ": " + prefix + key +
                      ": expected [min, max] with 1 <= min <= max");
  };
  if (!a || a->size() != 2) fail();
  auto x = (*a)[0].value_exact<int64_t>(), y = (*a)[1].value_exact<int64_t>();
  if (!x || !y || *x < 1 || *y < *x || *y > (1 << 24)) fail();
  lo = static_cast<uint32_t>(*x);
  hi = static_cast<uint32_t>(*y);
}

LengthDist read_length(const std::string& origin, const toml::table& parent, const char* key,
                       const std::string& prefix, LengthDist d) {
  const toml::table* t = table_at(origin, parent, key, prefix);
  if (!t) return d;
  const std::string p = prefix + key + ".";
  TableReader r(origin, *t, p);
  std::string dist = "fixed";
  r.read_string("dist", dist, true);
  const int64_t kMax = 1 << 24;
  if (dist == "fixed") {
    r.read_int("value", d.value, 1, kMax);
    d.kind = LengthDist::Kind::fixed;
  } else if (dist == "uniform" || dist == "normal") {
    d.min = 1;
    r.read_int("min", d.min, 1, kMax);
    r.read_int("max", d.max, 1, kMax);
    if (dist == "normal") {
      float mean = static_cast<float>(d.mean), sd = 0;
      r.read_float("mean", mean, 1, kMax);
      r.read_float("std", sd, 0, kMax);
      d.mean = mean;
      d.std = sd;
      d.kind = LengthDist::Kind::normal;
    } else {
      d.kind = LengthDist::Kind::uniform;
    }
    if (d.max < d.min) r.fail(*t, "max", "must be >= min (" + std::to_string(d.min) + ")");
  } else if (dist == "bimodal") {
    r.mark("short");
    r.mark("long");
    read_range(origin, *t, "short", p, d.short_min, d.short_max);
    read_range(origin, *t, "long", p, d.long_min, d.long_max);
    float f = static_cast<float>(d.long_fraction);
    r.read_float("long_fraction", f, 0, 1);
    d.long_fraction = f;
    d.kind = LengthDist::Kind::bimodal;
  } else {
    r.fail(*t->get("dist"), "dist",
           "must be fixed, uniform, normal or bimodal, got '" + dist + "'");
  }
  r.reject_unknown();
  return d;
}

void read_workload(const std::string& origin, const toml::table& t, WorkloadSpec& w) {
  TableReader r(origin, t, "workload.");
  r.read_int("seed", w.seed, 0, INT64_MAX);
  r.read_int("requests", w.requests, 1, 1 << 20);
  std::string arrival = "poisson";
  r.read_string("arrival", arrival);
  if (arrival == "poisson")
    w.arrival = WorkloadSpec::Arrival::poisson;
  else if (arrival == "gamma")
    w.arrival = WorkloadSpec::Arrival::gamma;
  else if (arrival == "trace")
    w.arrival = WorkloadSpec::Arrival::trace;
  else
    r.fail(*t.get("arrival"), "arrival", "must be poisson, gamma or trace, got '" + arrival + "'");
  float rate = w.arrival == WorkloadSpec::Arrival::trace ? 0.0f : static_cast<float>(w.rate);
  r.read_float("rate", rate, 0, INFINITY);
  if (rate == 0 && w.arrival != WorkloadSpec::Arrival::trace)
    r.fail(*t.get("rate"), "rate",
           "must be > 0 (inf: all at once; 0 only replays a trace as recorded)");
  w.rate = rate;
  float b = static_cast<float>(w.burstiness);
  r.read_float("burstiness", b, 1e-3, INFINITY);
  w.burstiness = b;
  r.read_string("trace", w.trace_path, w.arrival == WorkloadSpec::Arrival::trace);
  float f = static_cast<float>(w.simple_ratio);
  r.read_float("simple_ratio", f, 0, 1);
  w.simple_ratio = f;
  f = static_cast<float>(w.shared_prefix_ratio);
  r.read_float("shared_prefix_ratio", f, 0, 1);
  w.shared_prefix_ratio = f;
  r.read_int("shared_prefix_len", w.shared_prefix_len, 0, 1 << 20);
  for (auto [key, cls] : {std::pair{"simple", &w.simple}, std::pair{"complex", &w.complex}}) {
    r.mark(key);
    if (const toml::table* c = table_at(origin, t, key, "workload.")) {
      const std::string p = std::string("workload.") + key + ".";
      TableReader cr(origin, *c, p);
      cr.mark("prompt_len");
      cr.mark("output_len");
      cr.reject_unknown();
      cls->prompt = read_length(origin, *c, "prompt_len", p, cls->prompt);
      cls->output = read_length(origin, *c, "output_len", p, cls->output);
    }
  }
  r.reject_unknown();
}

void read_slo(const std::string& origin, const toml::table& t, Slo& slo) {
  TableReader r(origin, t, "slo.");
  for (auto [key, out] : {std::pair{"ttft_ms", &slo.ttft_ms}, std::pair{"tpot_ms", &slo.tpot_ms},
                          std::pair{"e2el_ms", &slo.e2el_ms}}) {
    if (!t.get(key)) {
      r.mark(key);
      continue;
    }
    float v = 0;
    r.read_float(key, v, 0, 1e9);
    *out = v;
  }
  r.reject_unknown();
}

void read_sweep(const std::string& origin, const toml::table& t, SweepSpec& s) {
  TableReader r(origin, t, "sweep.");
  s.enabled = true;
  r.read_int("requests", s.requests, 1, 1 << 20);
  r.read_int("min_requests", s.min_requests, 1, 1 << 20);
  r.read_int("max_points", s.max_points, 1, 100);
  r.read_int("refine", s.refine, 0, 10);
  auto real = [&](const char* key, double& out, double lo, double hi) {
    float v = static_cast<float>(out);
    r.read_float(key, v, lo, hi);
    out = v;
  };
  real("seconds", s.seconds, 0, 3600);
  real("start", s.start, 1e-3, 1e6);
  real("factor", s.factor, 1.05, 100);
  real("min_rise", s.min_rise, 0, 10);
  real("percentile", s.percentile, 1, 100);
  r.mark("rates");
  if (const toml::node* n = t.get("rates")) {
    const toml::array* a = n->as_array();
    if (!a)
      r.fail(*n, "rates",
             std::string("expected an array of numbers, got ") + TableReader::type_name(*n));
    for (const auto& e : *a) {
      auto v = e.value<double>();
      if (!v || e.is_boolean() || !(*v > 0) || std::isinf(*v))
        r.fail(e, "rates", "every rate must be a finite number > 0");
      s.rates.push_back(*v);
    }
  }
  r.reject_unknown();
}

CapacitySpec read_capacity(const std::string& origin, const toml::table& t) {
  CapacitySpec c;
  TableReader r(origin, t, "capacity.");
  float v = 0;
  if (!t.get("target_rate"))
    throw ConfigError(where(origin, t.source()) +
                      ": capacity.target_rate: required key is missing");
  r.read_float("target_rate", v, 1e-6, 1e9);
  c.target_rate = v;
  r.read_string("metric", c.metric);
  if (c.metric != "ttft" && c.metric != "e2el")
    r.fail(*t.get("metric"), "metric", "must be ttft or e2el, got '" + c.metric + "'");
  v = static_cast<float>(c.percentile);
  r.read_float("percentile", v, 1, 99.9);
  c.percentile = v;
  v = static_cast<float>(c.slo_ms);
  r.read_float("slo_ms", v, 1e-3, 1e9);
  c.slo_ms = v;
  if (t.get("simple_ratio")) {
    r.read_float("simple_ratio", v, 0, 1);
    c.simple_ratio = v;
  } else {
    r.mark("simple_ratio");
  }
  r.read_bool("validate", c.validate);
  r.read_int("requests", c.requests, 1, 1 << 20);
  r.reject_unknown();
  return c;
}

}  // namespace

CompareConfig parse_compare(const std::string& text, const std::string& origin) {
  toml::table root = parse_toml(text, origin);
  CompareConfig c;
  c.origin = origin;
  TableReader top(origin, root, "");
  const auto [dirs, models_dir] = read_variant_file_keys(top, c.log_level);
  for (const char* k : {"workload", "slo", "sweep", "capacity", "run", "variants"}) top.mark(k);
  top.reject_unknown();
  if (auto* t = table_at(origin, root, "workload", "")) read_workload(origin, *t, c.workload);
  if (auto* t = table_at(origin, root, "slo", "")) read_slo(origin, *t, c.slo);
  if (auto* t = table_at(origin, root, "sweep", "")) read_sweep(origin, *t, c.sweep);
  if (auto* t = table_at(origin, root, "capacity", "")) c.capacity = read_capacity(origin, *t);
  if (auto* t = table_at(origin, root, "run", "")) {
    TableReader r(origin, *t, "run.");
    float v = static_cast<float>(c.run.timeout_s);
    r.read_float("timeout_s", v, 1, 86400);
    c.run.timeout_s = v;
    r.read_int("warmup_requests", c.run.warmup_requests, 0, 1024);
    r.reject_unknown();
  }
  if (!root.get("variants"))
    throw ConfigError(origin + ":1:1: variants: no [[variants]] to compare");
  std::vector<std::pair<std::string, std::string>> remote;  // endpoint, served_model per entry
  auto tables = parse_variant_tables(
      root, origin, dirs, {}, [&](TableReader& r, const toml::table& vt, size_t) {
        remote.emplace_back();
        if (!vt.get("endpoint")) return false;  // in process: the rest is a config
        r.read_string("endpoint", remote.back().first);
        try {
          parse_url(remote.back().first);
        } catch (const Error& e) {
          r.fail(*vt.get("endpoint"), "endpoint", e.what());
        }
        r.read_string("served_model", remote.back().second);
        r.reject_unknown();  // a running server: nothing else to configure
        return true;
      });
  for (size_t i = 0; i < tables.size(); ++i) {
    VariantSpec v;
    v.name = std::move(tables[i].name);
    v.where = std::move(tables[i].where);
    v.endpoint = std::move(remote[i].first);
    v.served_model = std::move(remote[i].second);
    if (tables[i].config.models_dir.empty()) tables[i].config.models_dir = models_dir;
    if (v.endpoint.empty()) v.config = std::move(tables[i].config);
    c.variants.push_back(std::move(v));
  }
  return c;
}

CompareConfig load_compare(const std::filesystem::path& path) {
  return parse_compare(read_text_file(path), path.string());
}

}  // namespace sy::bench
