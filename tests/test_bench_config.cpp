// The compare file: what it reads, and errors that name file:line:column: key, including errors
// inside a variant, which the single-variant config parser reports at their place in this file.
#include <gtest/gtest.h>

#include "bench/compare_config.h"
#include "bench/default_compare.h"

using namespace sy::bench;

namespace {

const char* kGood = R"(plugin_dirs = ["extra/plugins"]

[workload]
seed = 9
requests = 12
arrival = "gamma"
rate = 3.5
burstiness = 0.5
simple_ratio = 0.25
shared_prefix_ratio = 0.5
shared_prefix_len = 8

[workload.simple]
prompt_len = { dist = "uniform", min = 4, max = 9 }
output_len = { dist = "fixed", value = 3 }

[workload.complex]
prompt_len = { dist = "bimodal", short = [10, 20], long = [100, 200], long_fraction = 0.125 }
output_len = { dist = "normal", mean = 20, std = 4, min = 5, max = 40 }

[slo]
ttft_ms = 250
e2el_ms = 2000

[sweep]
rates = [1, 2.5]
requests = 6

[capacity]
target_rate = 30
metric = "e2el"
percentile = 99
slo_ms = 1500

[[variants]]
name = "a"
[variants.model]
path = "m.gguf"
generate = "dense-tiny"
[variants.backend]
plugin = "cpu_ref"
[variants.scheduler]
plugin = "fixed_window"
max_batch = 3

[[variants]]
name = "b"
[variants.model]
path = "m.gguf"
[variants.backend]
plugin = "cpu_onednn"
[variants.scheduler]
plugin = "dynamic"
[variants.engine]
max_seqs = 4
)";

std::string error_of(const std::string& text) {
  try {
    parse_compare(text, "cmp.toml");
  } catch (const sy::ConfigError& e) {
    return e.what();
  }
  return "parsed";
}

// kGood with `from` (which must occur once) replaced by `to`.
std::string with(const std::string& from, const std::string& to) {
  std::string s = kGood;
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(s.find(from, at + 1), std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST(BenchConfig, ReadsWorkloadSloSweepCapacityAndVariants) {
  const CompareConfig c = parse_compare(kGood, "cmp.toml");
  EXPECT_EQ(c.workload.seed, 9u);
  EXPECT_EQ(c.workload.requests, 12u);
  EXPECT_EQ(c.workload.arrival, WorkloadSpec::Arrival::gamma);
  EXPECT_DOUBLE_EQ(c.workload.rate, 3.5);
  EXPECT_DOUBLE_EQ(c.workload.burstiness, 0.5);
  EXPECT_DOUBLE_EQ(c.workload.simple_ratio, 0.25);
  EXPECT_EQ(c.workload.shared_prefix_len, 8u);
  EXPECT_EQ(c.workload.simple.prompt.kind, LengthDist::Kind::uniform);
  EXPECT_EQ(c.workload.simple.prompt.max, 9u);
  EXPECT_EQ(c.workload.simple.output.value, 3u);
  EXPECT_EQ(c.workload.complex.prompt.kind, LengthDist::Kind::bimodal);
  EXPECT_EQ(c.workload.complex.prompt.long_min, 100u);
  EXPECT_DOUBLE_EQ(c.workload.complex.prompt.long_fraction, 0.125);
  EXPECT_EQ(c.workload.complex.output.kind, LengthDist::Kind::normal);
  EXPECT_DOUBLE_EQ(c.workload.complex.output.std, 4);
  EXPECT_DOUBLE_EQ(*c.slo.ttft_ms, 250);
  EXPECT_FALSE(c.slo.tpot_ms);
  EXPECT_DOUBLE_EQ(*c.slo.e2el_ms, 2000);
  EXPECT_EQ(c.sweep.rates, (std::vector<double>{1, 2.5}));
  EXPECT_EQ(c.sweep.requests, 6u);
  ASSERT_TRUE(c.capacity);
  EXPECT_EQ(c.capacity->metric, "e2el");
  EXPECT_DOUBLE_EQ(c.capacity->percentile, 99);
  ASSERT_EQ(c.variants.size(), 2u);
  EXPECT_EQ(c.variants[0].name, "a");
  EXPECT_EQ(c.variants[0].config.backend.plugin, "cpu_ref");
  EXPECT_EQ(c.variants[0].config.scheduler.params, (sy::Params{{"max_batch", "3"}}));
  EXPECT_EQ(c.variants[0].config.model.generate, "dense-tiny");
  EXPECT_EQ(c.variants[0].config.plugin_dirs.front(), "extra/plugins");
  EXPECT_EQ(c.variants[1].config.scheduler.plugin, "dynamic");
  EXPECT_EQ(c.variants[1].config.engine.max_seqs, 4u);
  EXPECT_EQ(c.variants[1].where, "cmp.toml:46:1");
}

TEST(BenchConfig, ErrorsInsideAVariantNameTheirLineInTheCompareFile) {
  EXPECT_EQ(error_of(with("max_seqs = 4", "max_seqs = \"four\"")),
            "cmp.toml:55:12: engine.max_seqs: expected an integer, got string");
  EXPECT_EQ(error_of(with("max_seqs = 4", "max_seqs = 4\nturbo = true")),
            "cmp.toml:56:1: engine.turbo: unknown key");
  EXPECT_EQ(error_of(with("path = \"m.gguf\"\ngenerate", "path = 7\ngenerate")),
            "cmp.toml:38:8: model.path: expected a string, got integer");
}

TEST(BenchConfig, VariantStructureErrors) {
  EXPECT_EQ(error_of(with("name = \"b\"", "name = \"a\"")),
            "cmp.toml:47:8: variants.name: 'a' is used twice");
  EXPECT_EQ(error_of(with("[variants.backend]\nplugin = \"cpu_onednn\"\n", "")),
            "cmp.toml:46:1: variants.backend: variant 'b' has no [variants.backend] table");
  const std::string no_variants =
      std::string(kGood).substr(0, std::string(kGood).find("[[variants]]"));
  EXPECT_EQ(error_of(no_variants), "cmp.toml:1:1: variants: no [[variants]] to compare");
  EXPECT_EQ(error_of(with("[[variants]]\nname = \"a\"\n", "[[variants]]\n")),
            "cmp.toml:35:1: variants.name: required key is missing");
}

TEST(BenchConfig, WorkloadAndSectionErrors) {
  EXPECT_EQ(error_of(with("requests = 12", "requests = 12\nbogus = 1")),
            "cmp.toml:6:1: workload.bogus: unknown key");
  EXPECT_EQ(error_of(with("arrival = \"gamma\"", "arrival = \"zipf\"")),
            "cmp.toml:6:11: workload.arrival: must be poisson, gamma or trace, got 'zipf'");
  EXPECT_EQ(error_of(with("rate = 3.5", "rate = 0")),
            "cmp.toml:7:8: workload.rate: must be > 0 (inf: all at once; 0 only replays a trace as "
            "recorded)");
  EXPECT_EQ(error_of(with("dist = \"uniform\"", "dist = \"zipf\"")),
            "cmp.toml:14:23: workload.simple.prompt_len.dist: must be fixed, uniform, normal or "
            "bimodal, got 'zipf'");
  EXPECT_EQ(error_of(with("short = [10, 20]", "short = [20, 10]")),
            "cmp.toml:18:42: workload.complex.prompt_len.short: expected [min, max] with 1 <= min "
            "<= max");
  EXPECT_EQ(error_of(with("min = 4, max = 9", "min = 9, max = 4")),
            "cmp.toml:14:14: workload.simple.prompt_len.max: must be >= min (9)");
  EXPECT_EQ(error_of(with("rates = [1, 2.5]", "rates = [1, -2]")),
            "cmp.toml:26:13: sweep.rates: every rate must be a finite number > 0");
  EXPECT_EQ(error_of(with("metric = \"e2el\"", "metric = \"tpot\"")),
            "cmp.toml:31:10: capacity.metric: must be ttft or e2el, got 'tpot'");
  EXPECT_EQ(error_of(with("target_rate = 30\n", "")),
            "cmp.toml:29:1: capacity.target_rate: required key is missing");
  EXPECT_EQ(error_of(with("ttft_ms = 250", "ttft_ms = \"fast\"")),
            "cmp.toml:22:11: slo.ttft_ms: expected a number, got string");
  EXPECT_EQ(error_of(std::string(kGood) + "[run]\ntimeout_s = 0\n"),
            "cmp.toml:57:13: run.timeout_s: must be in [1, 86400], got 0");
}

TEST(BenchConfig, EmbeddedDefaultParses) {
  const CompareConfig c = parse_compare(kDefaultCompare, kDefaultCompareOrigin);
  ASSERT_EQ(c.variants.size(), 4u);
  EXPECT_EQ(c.variants[0].name, "dense/original");
  EXPECT_EQ(c.variants[1].config.model.generate, "qwen3-20m");
  EXPECT_EQ(c.variants[2].config.model.generate, "qwen35moe-20m");
  EXPECT_EQ(c.variants[3].config.scheduler.plugin, "dynamic");
  EXPECT_TRUE(c.variants[3].config.engine.prefix_caching);
  EXPECT_EQ(c.variants[0].config.backend.params, (sy::Params{{"threads", "1"}}));
  EXPECT_EQ(c.workload.arrival, WorkloadSpec::Arrival::gamma);
  EXPECT_TRUE(c.sweep.enabled);
  EXPECT_TRUE(c.sweep.rates.empty()) << "the automatic sweep";
  EXPECT_EQ(c.sweep.factor, 2.0);
  EXPECT_EQ(c.sweep.refine, 2u);
}

TEST(BenchConfig, EndpointVariants) {
  const CompareConfig c = parse_compare(
      std::string(kGood) +
          "[[variants]]\nname = \"srv\"\nendpoint = \"http://127.0.0.1:8000/v1/completions\"\n"
          "served_model = \"dense\"\n",
      "cmp.toml");
  ASSERT_EQ(c.variants.size(), 3u);
  EXPECT_EQ(c.variants[2].endpoint, "http://127.0.0.1:8000/v1/completions");
  EXPECT_EQ(c.variants[2].served_model, "dense");
  EXPECT_EQ(
      error_of(std::string(kGood) + "[[variants]]\nname = \"srv\"\nendpoint = \"https://x\"\n"),
      "cmp.toml:58:12: variants.endpoint: endpoint 'https://x' must start with http:// (no TLS)");
  EXPECT_EQ(error_of(std::string(kGood) + "[[variants]]\nname = \"srv\"\nendpoint = "
                                          "\"http://x\"\n[variants.model]\npath = \"m\"\n"),
            "cmp.toml:59:11: variants.model: unknown key");
}
