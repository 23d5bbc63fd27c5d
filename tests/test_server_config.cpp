// The serving config: the single-variant form, [[variants]] with weights, [serve], and errors
// that name file:line:column: key.
#include <gtest/gtest.h>

#include "config/config.h"
#include "server/kv_events_config.h"
#include "server/serve_config.h"

namespace {

using sy::ConfigError;
using sy::server::parse_serve_config;

std::string error_of(const std::string& text) {
  try {
    parse_serve_config(text, "s.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

const char* kVariant = R"(
[variants.model]
path = "m.gguf"
[variants.backend]
plugin = "cpu_ref"
[variants.scheduler]
plugin = "fixed_window"
)";

TEST(ServeConfig, SingleVariantFileIsNamedDefault) {
  const auto c = parse_serve_config(R"([serve]
port = 0
max_queue = 7
request_timeout_s = 2.5
model_name = "tiny"
priority_order = "vllm"

[model]
path = "m.gguf"
[backend]
plugin = "cpu_ref"
[scheduler]
plugin = "dynamic"
max_wait_ms = 3
)",
                                    "s.toml");
  ASSERT_EQ(c.variants.size(), 1u);
  EXPECT_EQ(c.variants[0].name, "default");
  EXPECT_EQ(c.variants[0].weight, 1);
  EXPECT_EQ(c.variants[0].config.scheduler.plugin, "dynamic");
  ASSERT_EQ(c.variants[0].config.scheduler.params.size(), 1u);
  EXPECT_EQ(c.variants[0].config.scheduler.params[0].second, "3");
  EXPECT_EQ(c.serve.port, 0);
  EXPECT_EQ(c.serve.max_queue, 7u);
  EXPECT_DOUBLE_EQ(c.serve.request_timeout_s, 2.5);
  EXPECT_EQ(c.serve.model_name, "tiny");
  EXPECT_EQ(c.serve.baseline, "default");
  EXPECT_EQ(c.serve.host, "127.0.0.1");
  EXPECT_EQ(c.serve.priority_order, "vllm");
  EXPECT_FALSE(c.serve.shadow);
}

TEST(ServeConfig, VariantsWithWeightsBaselineAndShadow) {
  const std::string text = std::string(
                               "plugin_dirs = [\"/p\"]\n[serve]\nbaseline = \"b\"\nshadow = { "
                               "variant = \"a\", fraction = 0.25 }\n") +
                           "[[variants]]\nname = \"a\"\nweight = 90\n" + kVariant +
                           "[[variants]]\nname = \"b\"\nweight = 10\n" + kVariant;
  const auto c = parse_serve_config(text, "s.toml");
  ASSERT_EQ(c.variants.size(), 2u);
  EXPECT_EQ(c.variants[0].name, "a");
  EXPECT_EQ(c.variants[0].weight, 90);
  EXPECT_EQ(c.variants[1].name, "b");
  EXPECT_EQ(c.variants[1].weight, 10);
  EXPECT_EQ(c.variants[1].config.plugin_dirs.front(), "/p");
  EXPECT_EQ(c.serve.baseline, "b");
  ASSERT_TRUE(c.serve.shadow);
  EXPECT_EQ(c.serve.shadow->variant, "a");
  EXPECT_DOUBLE_EQ(c.serve.shadow->fraction, 0.25);
}

TEST(ServeConfig, BaselineDefaultsToTheFirstVariant) {
  const auto c =
      parse_serve_config(std::string("[[variants]]\nname = \"x\"\n") + kVariant, "s.toml");
  EXPECT_EQ(c.serve.baseline, "x");
  EXPECT_EQ(c.variants[0].weight, 1);
}

TEST(ServeConfig, ErrorsNameFileLineColumnAndKey) {
  EXPECT_EQ(error_of("[serve]\nport = \"x\"\n"),
            "s.toml:2:8: serve.port: expected an integer, got string");
  EXPECT_EQ(error_of("[serve]\nport = 70000\n"),
            "s.toml:2:8: serve.port: must be in [0, 65535], got 70000");
  EXPECT_EQ(error_of("[serve]\nbogus = 1\n"), "s.toml:2:1: serve.bogus: unknown key");
  EXPECT_EQ(error_of("[serve]\npriority_order = \"smaller\"\n"),
            "s.toml:2:18: serve.priority_order: must be \"larger_first\" or \"vllm\"");
  EXPECT_EQ(error_of("[serve]\nshadow = 3\n"),
            "s.toml:2:10: serve.shadow: expected a table, got integer");
  EXPECT_EQ(error_of("[serve]\nshadow = { variant = \"a\" }\n" +
                     std::string("[[variants]]\nname = \"a\"\n") + kVariant),
            "s.toml:2:10: serve.shadow.fraction: required key is missing");
  EXPECT_EQ(
      error_of(
          "[serve]\nshadow = { variant = \"zz\", fraction = 0.5 }\n[[variants]]\nname = \"a\"\n" +
          std::string(kVariant)),
      "s.toml:2:22: serve.shadow.variant: no variant named 'zz'");
  EXPECT_EQ(
      error_of("[serve]\nbaseline = \"q\"\n[[variants]]\nname = \"a\"\n" + std::string(kVariant)),
      "s.toml:2:12: serve.baseline: no variant named 'q'");
  EXPECT_EQ(
      error_of(
          "[serve]\nshadow = { variant = \"default\", fraction = 1 }\n[model]\npath = \"m\"\n"),
      "s.toml:2:10: serve.shadow: a shadow needs [[variants]] to compare against");
}

// A build without ZeroMQ (SWITCHYARD_KV_EVENTS off) refuses the table where it stands, not at
// the first publish; a build with it reads the table.
TEST(ServeConfig, KvEventsTableNeedsABuildWithKvEvents) {
  const std::string text = "[serve]\nport = 0\nkv_events = { endpoint = \"tcp://*:6000\" }\n" +
                           std::string("[[variants]]\nname = \"a\"\n") + kVariant;
  if (sy::server::kv_events_built()) {
    const auto kv = parse_serve_config(text, "s.toml").serve.kv_events;
    EXPECT_EQ(kv.value_or(sy::server::KvEventsConfig{}).endpoint, "tcp://*:6000");
  } else {
    EXPECT_EQ(error_of(text),
              "s.toml:3:13: serve.kv_events: this build has no KV cache events (configure with "
              "-DSWITCHYARD_KV_EVENTS=ON, which needs libzmq3-dev, cppzmq-dev and "
              "libmsgpack-cxx-dev)");
  }
}

TEST(ServeConfig, VariantErrorsKeepTheirPositions) {
  const std::string a = std::string("[[variants]]\nname = \"a\"\n") + kVariant;  // 9 lines
  EXPECT_EQ(error_of(a + a), "s.toml:11:8: variants.name: 'a' is used twice");
  EXPECT_EQ(error_of("[[variants]]\nname = \"a\"\nweight = -1\n" + std::string(kVariant)),
            "s.toml:3:10: variants.weight: must be in [0, 1e+06], got -1");
  EXPECT_EQ(error_of("[[variants]]\nname = \"a\"\nweight = 0\n" + std::string(kVariant)),
            "s.toml:1:1: variants.weight: every weight is 0, no variant would get traffic");
  EXPECT_EQ(error_of("[[variants]]\nname = \"a\"\n[variants.model]\npath = "
                     "\"m\"\n[variants.backend]\nplugin = \"x\"\n"),
            "s.toml:1:1: variants.scheduler: variant 'a' has no [variants.scheduler] table");
  EXPECT_EQ(error_of(a + "[variants.engine]\nmax_seqs = \"many\"\n"),
            "s.toml:11:12: engine.max_seqs: expected an integer, got string");
  EXPECT_EQ(error_of("[model]\npath = \"m\"\n" + a),
            "s.toml:1:1: model: a file with [[variants]] takes [variants.model] inside each entry, "
            "not a top-level [model]");
  EXPECT_EQ(error_of("variants = 3\n"), "s.toml:1:12: variants: expected [[variants]] tables");
  EXPECT_EQ(error_of("[serve\n"),
            "s.toml:1:7: syntax error: Error while parsing table header: expected ']', saw '\\n'");
}

TEST(ServeConfig, FingerprintChangesWithWhatBuildsTheVariant) {
  const std::string base = std::string("[[variants]]\nname = \"a\"\n") + kVariant;
  const auto c1 = parse_serve_config(base, "s.toml");
  const auto c2 = parse_serve_config(base + "max_batch = 2\n", "s.toml");
  const auto c3 = parse_serve_config(base + "max_batch = 2\n", "other.toml");
  EXPECT_NE(sy::server::fingerprint(c1.variants[0].config),
            sy::server::fingerprint(c2.variants[0].config));
  EXPECT_EQ(sy::server::fingerprint(c2.variants[0].config),
            sy::server::fingerprint(c3.variants[0].config));
}

}  // namespace
