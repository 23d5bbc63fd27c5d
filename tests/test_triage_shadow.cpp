// Misrouting, measured on shadow runs: a light-path request whose shadow ran on the full path
// (a shadow variant with [triage] force_full = true) is a misroute when their tokens differ.
// First the comparison and its metrics alone, then through the HTTP server, where the expected
// counts come from asking the full variant directly.
#include <gtest/gtest.h>

#include "modelgen/generator.h"
#include "server/serve_config.h"
#include "server/serve_metrics.h"
#include "server/shadow.h"
#include "server_fixture.h"

namespace {

using namespace sy::server;
using sy::test::json;

Outcome out(std::vector<int32_t> tokens, uint32_t path) {
  Outcome o;
  o.tokens = std::move(tokens);
  o.path = path;
  o.reason = sy::engine::FinishReason::length;
  return o;
}

TEST(TriageShadow, ALightAnswerThatDiffersFromItsFullShadowIsAMisroute) {
  auto r = compare_outputs(out({1, 2, 3}, 1), out({1, 2, 4}, 0));
  EXPECT_TRUE(r.light_vs_full);
  EXPECT_TRUE(r.misroute);
  r = compare_outputs(out({1, 2, 3}, 1), out({1, 2, 3}, 0));
  EXPECT_TRUE(r.light_vs_full);
  EXPECT_FALSE(r.misroute);
  r = compare_outputs(out({1, 2, 3}, 0), out({1, 2, 4}, 0));  // full primary: nothing to judge
  EXPECT_FALSE(r.light_vs_full);
  EXPECT_FALSE(r.misroute);
  r = compare_outputs(out({1, 2, 3}, 1), out({1, 2, 4}, 1));  // light shadow: not the full answer
  EXPECT_FALSE(r.light_vs_full);
  EXPECT_FALSE(r.misroute);

  ServeMetrics m("tiny");
  m.shadow_compared("p", "s", compare_outputs(out({1, 2}, 1), out({1, 3}, 0)));
  m.shadow_compared("p", "s", compare_outputs(out({1, 2}, 1), out({1, 2}, 0)));
  m.shadow_compared("p", "s", compare_outputs(out({1, 2}, 0), out({1, 3}, 0)));
  const std::string text = m.render({});
  const std::string l = "{model_name=\"tiny\",variant=\"p\",shadow=\"s\"}";
  EXPECT_EQ(sy::test::metric(text, "switchyard:triage_shadowed_light_total" + l), 2);
  EXPECT_EQ(sy::test::metric(text, "switchyard:triage_misroutes_total" + l), 1);
  EXPECT_EQ(sy::test::metric(text, "switchyard:shadow_requests_total" + l), 3);
}

// A hot swap rebuilds a variant whose [triage] changed (flipping the switch takes effect).
TEST(TriageShadow, TheTriageTableIsPartOfAVariantsFingerprint) {
  const std::string base =
      "[model]\npath = \"m.gguf\"\n[backend]\nplugin = \"cpu_ref\"\n"
      "[scheduler]\nplugin = \"fixed_window\"\n";
  auto fp = [&](const std::string& triage) {
    return fingerprint(sy::parse_config(base + triage, "fp.toml"));
  };
  const std::string on = "[triage]\nplugin = \"triage_rules\"\n";
  EXPECT_NE(fp(""), fp(on));
  EXPECT_NE(fp(on), fp(on + "force_full = true\n"));
  EXPECT_NE(fp(on), fp(on + "light_experts = 1\n"));
  EXPECT_NE(fp(on), fp(on + "[triage.params]\nhint = \"trust\"\n"));
  EXPECT_EQ(fp(on), fp(on));
}

// p routes prompts of at most kLight tokens to the light path (1 expert of 4); s is the same
// model with the switch forcing the full path (2 experts), and shadows every request.
constexpr uint32_t kLight = 9, kTok = 8;

std::string config(const sy::test::fs::path& model) {
  using sy::test::variant_tables;
  const std::string sched = "max_batch = 4\nwait_window_ms = 0\n";
  return sy::test::plugin_dirs_line() +
         "[serve]\nmodel_name = \"tiny\"\nshadow = { variant = \"s\", fraction = 1.0 }\n" +
         "[[variants]]\nname = \"p\"\n" +
         variant_tables("variants.", "fixed_window", sched, model) +
         "[variants.triage]\nplugin = \"triage_rules\"\nlight_experts = 1\n"
         "[variants.triage.params]\nhint = \"ignore\"\nmax_prompt_tokens = " +
         std::to_string(kLight) + "\nmax_new_tokens = " + std::to_string(kTok) + "\n" +
         "[[variants]]\nname = \"s\"\nweight = 0\n" +
         variant_tables("variants.", "fixed_window", sched, model) +
         "[variants.triage]\nforce_full = true\nlight_experts = 1\n";
}

json request(const std::vector<int32_t>& prompt, const std::string& model = "") {
  json j{{"prompt", json::array({prompt})},
         {"max_tokens", kTok},
         {"temperature", 0},
         {"ignore_eos", true}};
  if (!model.empty()) j["model"] = model;
  return j;
}

TEST(TriageShadow, ServerCountsMisroutesOfLightRequestsAgainstTheFullPath) {
  const auto model = sy::test::server_dir() / "triage-moe-tiny.gguf";
  if (!sy::test::fs::exists(model))
    sy::model::write_random_model(sy::model::preset_shape("moe-tiny"), "f32", 11, model);
  sy::test::TestServer s("triage-shadow", config(model));
  int n_light = 0, misroutes = 0;
  const int kN = 10;
  for (int i = 0; i < kN; ++i) {
    std::vector<int32_t> prompt(4 + i);  // 4..13 tokens: 4..9 light, 10..13 full
    for (size_t j = 0; j < prompt.size(); ++j) prompt[j] = int32_t((j * 23 + i * 7) % 250) + 3;
    auto r = s.post("/v1/completions", request(prompt));
    ASSERT_EQ(r->status, 200);
    auto full = s.post("/v1/completions", request(prompt, "s"));  // pinned: no shadow
    ASSERT_EQ(full->status, 200);
    const auto got = sy::test::token_ids(json::parse(r->body));
    const auto want = sy::test::token_ids(json::parse(full->body));
    if (prompt.size() <= kLight) {
      ++n_light;
      misroutes += got != want;
    } else {
      EXPECT_EQ(got, want);  // full path on both: the same model, the same tokens
    }
  }
  ASSERT_GT(misroutes, 0);  // one expert instead of two changes some answers
  const std::string l = "{model_name=\"tiny\",variant=\"p\",shadow=\"s\"}";
  ASSERT_TRUE(sy::test::eventually(
      [&] { return sy::test::metric(s.metrics(), "switchyard:shadow_requests_total" + l) == kN; }));
  const std::string m = s.metrics();
  EXPECT_EQ(sy::test::metric(m, "switchyard:triage_shadowed_light_total" + l), n_light);
  EXPECT_EQ(sy::test::metric(m, "switchyard:triage_misroutes_total" + l), misroutes);
  EXPECT_EQ(sy::test::metric(m,
                             "switchyard:requests_routed_total{model_name=\"tiny\",variant="
                             "\"p\",path=\"light\"}"),
            n_light);
  EXPECT_EQ(sy::test::metric(m,
                             "switchyard:requests_routed_total{model_name=\"tiny\",variant="
                             "\"p\",path=\"full\"}"),
            kN - n_light);
}

}  // namespace

// Engine counters are per variant: two runners' counters never mix in the exposition, and two
// runners of one variant (one draining after a swap) add up.
TEST(ServeMetricsCounters, EachVariantShowsItsOwnEngineCounters) {
  ServeMetrics m("tiny");
  sy::server::RunnerSnapshot a, b, a_old;
  a.variant = a_old.variant = "a";
  b.variant = "b";
  a.counters = {{"num_preemptions", 2}, {"prefix_cache_hit_tokens", 30}, {"x.y", 1}};
  a_old.counters = {{"num_preemptions", 1}};
  b.counters = {{"num_preemptions", 5}, {"expert_activations.1.3", 7}};
  const std::string text = m.render({a, b, a_old});
  auto l = [](const char* v) { return std::string("{model_name=\"tiny\",variant=\"") + v + "\"}"; };
  EXPECT_EQ(sy::test::metric(text, "switchyard:num_preemptions_total" + l("a")), 3);
  EXPECT_EQ(sy::test::metric(text, "switchyard:num_preemptions_total" + l("b")), 5);
  EXPECT_EQ(sy::test::metric(text, "switchyard:prefix_cache_hits_total" + l("a")), 30);
  EXPECT_EQ(sy::test::metric(text,
                             "switchyard:expert_activations_total{model_name=\"tiny\",variant=\"b\","
                             "layer=\"1\",expert=\"3\"}"),
            7);
  EXPECT_EQ(sy::test::metric(text, "switchyard:host_counter_total{model_name=\"tiny\",variant=\"a\","
                                   "name=\"x_y\"}"),
            1);
}
