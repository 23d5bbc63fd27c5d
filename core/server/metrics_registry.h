// A small Prometheus registry: counter, gauge and histogram families with labels, rendered in
// the text exposition format (version 0.0.4). Counters get the `_total` suffix on the wire, as
// prometheus_client writes them. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace sy::server {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Registry {
 public:
  // Defining a family twice with the same kind is a no-op; names are used as given.
  void define_counter(const std::string& name, const std::string& help);
  void define_gauge(const std::string& name, const std::string& help);
  void define_histogram(const std::string& name, const std::string& help,
                        std::vector<double> buckets);

  // Each throws std::logic_error for a family that was not defined with that kind.
  void inc(const std::string& name, const Labels& labels, double delta = 1);
  // Gauges, and counters mirrored from a running total kept elsewhere (host counters).
  void set(const std::string& name, const Labels& labels, double value);
  void observe(const std::string& name, const Labels& labels, double value);
  // Drops every series of a gauge or counter family (set at scrape time from live state).
  void clear(const std::string& name);

  // Current value of a counter or gauge series (0 when absent); for tests and status pages.
  double value(const std::string& name, const Labels& labels) const;
  std::string render() const;

 private:
  enum class Kind { counter, gauge, histogram };
  struct Series {
    double value = 0;              // counter, gauge
    std::vector<uint64_t> counts;  // histogram: per bucket (not cumulative), +Inf last
    double sum = 0;
  };
  struct Family {
    Kind kind;
    std::string help;
    std::vector<double> buckets;
    std::map<std::string, Series> series;  // key: rendered label set
  };
  Family& family(const std::string& name, Kind kind);
  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

// `{a="x",b="y"}` with Prometheus escaping ("" for no labels).
std::string render_labels(const Labels& labels);
// Shortest text that reads back as the same double ("0.001", "1", "+Inf").
std::string format_number(double v);
// vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, ... up to max.
std::vector<double> buckets_1_2_5(double max);

}  // namespace sy::server
