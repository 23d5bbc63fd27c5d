#include "server/metrics_registry.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "switchyard/common/error.h"

namespace sy::server {

std::string format_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  // Plain decimals for bucket bounds and values in the usual range ("0.0005", not "5e-04").
  const double a = std::fabs(v);
  const auto fmt =
      a != 0 && (a < 1e-4 || a >= 1e15) ? std::chars_format::general : std::chars_format::fixed;
  auto r = std::to_chars(buf, buf + sizeof buf, v, fmt);
  return std::string(buf, r.ptr);
}

std::string render_labels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ',';
    out += labels[i].first;
    out += "=\"";
    for (char c : labels[i].second) {
      if (c == '\\')
        out += "\\\\";
      else if (c == '"')
        out += "\\\"";
      else if (c == '\n')
        out += "\\n";
      else
        out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::vector<double> buckets_1_2_5(double max) {
  std::vector<double> b;
  for (double m = 1;; m *= 10)
    for (double f : {1.0, 2.0, 5.0}) {
      if (m * f > max) return b;
      b.push_back(m * f);
    }
}

void Registry::define_counter(const std::string& name, const std::string& help) {
  std::lock_guard<std::mutex> lk(mu_);
  families_.try_emplace(name, Family{Kind::counter, help, {}, {}});
}

void Registry::define_gauge(const std::string& name, const std::string& help) {
  std::lock_guard<std::mutex> lk(mu_);
  families_.try_emplace(name, Family{Kind::gauge, help, {}, {}});
}

void Registry::define_histogram(const std::string& name, const std::string& help,
                                std::vector<double> buckets) {
  std::lock_guard<std::mutex> lk(mu_);
  families_.try_emplace(name, Family{Kind::histogram, help, std::move(buckets), {}});
}

Registry::Family& Registry::family(const std::string& name, Kind kind) {
  auto it = families_.find(name);
  if (it == families_.end() || it->second.kind != kind)
    throw sy::Bug("metric " + name + " is not defined as that kind");
  return it->second;
}

void Registry::inc(const std::string& name, const Labels& labels, double delta) {
  std::lock_guard<std::mutex> lk(mu_);
  family(name, Kind::counter).series[render_labels(labels)].value += delta;
}

void Registry::set(const std::string& name, const Labels& labels, double value) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = families_.find(name);
  Family& f = it != families_.end() && it->second.kind == Kind::counter ? it->second
                                                                        : family(name, Kind::gauge);
  f.series[render_labels(labels)].value = value;
}

void Registry::observe(const std::string& name, const Labels& labels, double value) {
  std::lock_guard<std::mutex> lk(mu_);
  Family& f = family(name, Kind::histogram);
  Series& s = f.series[render_labels(labels)];
  if (s.counts.empty()) s.counts.assign(f.buckets.size() + 1, 0);
  size_t i = 0;
  while (i < f.buckets.size() && value > f.buckets[i]) ++i;  // le: value <= bound
  ++s.counts[i];
  s.sum += value;
}

void Registry::clear(const std::string& name) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = families_.find(name);
  Family& f = it != families_.end() && it->second.kind == Kind::counter ? it->second
                                                                        : family(name, Kind::gauge);
  f.series.clear();
}

double Registry::value(const std::string& name, const Labels& labels) const {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = families_.find(name);
  if (it == families_.end()) return 0;
  auto s = it->second.series.find(render_labels(labels));
  return s == it->second.series.end() ? 0 : s->second.value;
}

namespace {

// `{a="x"}` + le="0.5" -> `{a="x",le="0.5"}`.
std::string with_le(const std::string& labels, const std::string& le) {
  const std::string item = "le=\"" + le + "\"";
  if (labels.empty()) return "{" + item + "}";
  return labels.substr(0, labels.size() - 1) + "," + item + "}";
}

}  // namespace

std::string Registry::render() const {
  std::lock_guard<std::mutex> lk(mu_);
  std::ostringstream os;
  for (const auto& [name, f] : families_) {
    const std::string wire = f.kind == Kind::counter ? name + "_total" : name;
    const char* type = f.kind == Kind::counter ? "counter"
                       : f.kind == Kind::gauge ? "gauge"
                                               : "histogram";
    os << "# HELP " << wire << ' ' << f.help << '\n' << "# TYPE " << wire << ' ' << type << '\n';
    for (const auto& [labels, s] : f.series) {
      if (f.kind != Kind::histogram) {
        os << wire << labels << ' ' << format_number(s.value) << '\n';
        continue;
      }
      uint64_t cum = 0;
      for (size_t i = 0; i < f.buckets.size(); ++i) {
        cum += s.counts[i];
        os << name << "_bucket" << with_le(labels, format_number(f.buckets[i])) << ' ' << cum
           << '\n';
      }
      cum += s.counts.back();
      os << name << "_bucket" << with_le(labels, "+Inf") << ' ' << cum << '\n';
      os << name << "_sum" << labels << ' ' << format_number(s.sum) << '\n';
      os << name << "_count" << labels << ' ' << cum << '\n';
    }
  }
  return os.str();
}

}  // namespace sy::server
