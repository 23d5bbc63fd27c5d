// `switchyard bench --endpoint`: the probe rates follow the capacity model, every probe is
// really driven through HTTP and measured, the model's latency is set beside the measurement,
// and rows per replica count accumulate in cluster.json.
#include <gtest/gtest.h>

#include "bench/cluster_bench.h"
#include "bench/compare_config.h"
#include "bench/progress.h"
#include "server_fixture.h"
#include "switchyard/common/error.h"

namespace {

sy::bench::CompareConfig small_compare() {
  return sy::bench::parse_compare(R"([workload]
seed = 5
requests = 8
rate = 4.0
[workload.simple]
prompt_len = { dist = "uniform", min = 4, max = 12 }
output_len = { dist = "uniform", min = 2, max = 6 }
[workload.complex]
prompt_len = { dist = "uniform", min = 16, max = 24 }
output_len = { dist = "uniform", min = 4, max = 8 }
[sweep]
rates = []
requests = 8
[capacity]
target_rate = 6.0
slo_ms = 2000
[[variants]]
name = "remote"
endpoint = "http://127.0.0.1:1/v1/completions"
)",
                                  "t.toml");
}

sy::bench::CapacityResult fake_capacity(const sy::bench::CompareConfig& cfg) {
  sy::bench::CapacityResult c;
  c.spec = *cfg.capacity;
  // 250 ms per request, no fitted sweep: one replica carries 0.9 / 0.25 = 3.6 req/s.
  c.model = sy::bench::fit_capacity({0.25, 0.25}, {0.25, 0.25}, 0.5, 1.0, {});
  c.estimate = sy::bench::estimate_replicas(c.model, c.spec.target_rate, c.spec.slo_ms / 1e3);
  return c;
}

}  // namespace

TEST(ClusterBench, CompletionsUrlFillsInThePath) {
  EXPECT_EQ(sy::bench::completions_url("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080/v1/completions");
  EXPECT_EQ(sy::bench::completions_url("http://127.0.0.1:8080/"),
            "http://127.0.0.1:8080/v1/completions");
  EXPECT_EQ(sy::bench::completions_url("http://h:1/v1/completions"), "http://h:1/v1/completions");
  EXPECT_THROW(sy::bench::completions_url("127.0.0.1:8080"), sy::Error);
}

TEST(ClusterBench, ProbesAtFractionsOfTheModelsRateAndMeasuresEach) {
  sy::test::TestServer s("cluster_bench",
                         sy::test::plugin_dirs_line() + sy::test::variant_tables("", "dynamic"));
  const auto cfg = small_compare();
  const auto cap = fake_capacity(cfg);
  ASSERT_GT(cap.estimate.per_replica_rate, 0);
  ASSERT_EQ(cap.estimate.replicas, 2u);
  sy::bench::Progress quiet(stderr, false);
  // A one-replica "cluster": the server itself; pretend it is two replicas to check the rates.
  const auto row = sy::bench::measure_cluster(
      cfg, "replica", cap, "http://127.0.0.1:" + std::to_string(s.server->port()), 2, quiet,
      /*probe_seconds=*/1.5);
  const size_t planned = std::size(sy::bench::kClusterProbeFractions);
  ASSERT_GE(row.points.size(), planned);
  double factor = 0;
  for (size_t i = 0; i < row.points.size(); ++i) {
    const auto& p = row.points[i];
    // The planned fractions, then half as much again while the SLO still holds.
    factor = i < planned ? sy::bench::kClusterProbeFractions[i] : factor * 1.5;
    if (i >= planned) EXPECT_TRUE(row.points[i - 1].meets_slo) << "probed on past a miss";
    EXPECT_LE(factor, sy::bench::kClusterProbeMax);
    EXPECT_DOUBLE_EQ(p.offered_rate, factor * 2 * cap.estimate.per_replica_rate);
    EXPECT_EQ(p.completed, std::clamp<size_t>(std::ceil(p.offered_rate * 1.5),
                                             8, sy::bench::kClusterProbeMaxRequests));
    EXPECT_EQ(p.failed, 0u);
    EXPECT_GT(p.request_throughput, 0);
    EXPECT_DOUBLE_EQ(p.predicted_latency_s, cap.model.latency_at(p.offered_rate / 2));
    EXPECT_EQ(p.meets_slo, p.measured_latency_s <= 2.0 &&
                               p.request_throughput >= sy::bench::kClusterKeepUp * p.offered_rate);
  }
  EXPECT_EQ(row.model_replicas, 2u);
  EXPECT_GE(row.peak_throughput, row.points[0].request_throughput);
  if (row.measured_capacity > 0)
    EXPECT_EQ(row.measured_replicas,
              static_cast<uint32_t>(std::ceil(6.0 / (row.measured_capacity / 2) - 1e-9)));

  // Rows accumulate per replica count; measuring a count again replaces its row.
  const auto path = sy::test::server_dir() / "cluster.json";
  std::filesystem::remove(path);
  auto one = row;
  one.replicas = 1;
  sy::bench::write_cluster_rows(path, sy::bench::merge_cluster_rows(path, one));
  auto rows = sy::bench::merge_cluster_rows(path, row);
  ASSERT_EQ(rows.size(), 2u);
  sy::bench::write_cluster_rows(path, rows);
  auto again = row;
  again.peak_throughput = 123;
  rows = sy::bench::merge_cluster_rows(path, again);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].replicas, 1u);
  EXPECT_EQ(rows[1].peak_throughput, 123);
  EXPECT_DOUBLE_EQ(rows[0].points[2].measured_latency_s, row.points[2].measured_latency_s);
  const std::string md = sy::bench::cluster_markdown(rows);
  EXPECT_NE(md.find("| 1 | "), std::string::npos);
  EXPECT_NE(md.find("| 2 | "), std::string::npos);
  EXPECT_NE(md.find("### 2 replicas"), std::string::npos);
}
