// Request triage end to end through Variant::build: the force_full switch sends every request of
// a labelled set down the full path without calling the router; with triage on each request's
// path is the configured rule (evaluated here, independently) for every hint mode; light
// requests really run on fewer experts (activation counters); bad routers and bad [triage]
// tables are refused with exact messages, and a router failing at run time costs nothing but
// the light path.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <thread>

#include "config/config.h"
#include "engine/variant.h"
#include "host/host_api.h"
#include "host/plugin_host.h"
#include "modelgen/generator.h"

namespace fs = std::filesystem;

namespace {

const std::string kPlugins = SWITCHYARD_PLUGIN_DIR;
const std::string kTestPlugins = SWITCHYARD_TEST_PLUGIN_DIR;

// moe-tiny: Mixtral-style llama, 2 layers, 4 experts, 2 per token by default.
const fs::path& model_file(const std::string& preset) {
  static std::map<std::string, fs::path> files;
  if (auto it = files.find(preset); it != files.end()) return it->second;
  const fs::path p = fs::path(testing::TempDir()) /
                     ("sy-triage-" + preset + "-" + std::to_string(::getpid()) + ".gguf");
  sy::model::write_random_model(sy::model::preset_shape(preset), "f32", 5, p);
  return files[preset] = p;
}

std::string config_text(const std::string& triage, const std::string& preset = "moe-tiny") {
  return "plugin_dirs = [\"" + kPlugins + "\", \"" + kTestPlugins + "\"]\n[model]\npath = \"" +
         model_file(preset).string() +
         "\"\n[backend]\nplugin = \"cpu_ref\"\n[scheduler]\nplugin = \"fixed_window\"\n"
         "max_batch = 4\nwait_window_ms = 0\n[engine]\nmax_seqs = 4\nmax_batch_tokens = 64\n" +
         triage;
}

std::unique_ptr<sy::engine::Variant> build(const std::string& triage) {
  return sy::engine::Variant::build(sy::parse_config(config_text(triage), "triage.toml"));
}

// The labelled set: every combination of a few prompt lengths, output lengths and hints.
struct Item {
  uint32_t prompt_len, max_new;
  bool hint;
};
std::vector<Item> labelled_set() {
  std::vector<Item> out;
  for (uint32_t p : {3u, 8u, 12u, 13u, 21u})
    for (uint32_t n : {4u, 8u, 9u})
      for (bool h : {false, true}) out.push_back({p, n, h});
  return out;
}

// The rule of docs/triage (plugins/triage_rules), written out again here.
constexpr uint32_t kMaxPrompt = 12, kMaxNew = 8;
bool expect_light(const std::string& mode, const Item& it) {
  const bool lengths = it.prompt_len <= kMaxPrompt && it.max_new <= kMaxNew;
  if (mode == "require") return lengths && it.hint;
  if (mode == "trust") return lengths || it.hint;
  return lengths;  // ignore
}

std::string rules(const std::string& mode, bool force_full = false) {
  return "[triage]\nplugin = \"triage_rules\"\nlight_experts = 1\nforce_full = " +
         std::string(force_full ? "true" : "false") +
         "\n[triage.params]\nmax_prompt_tokens = " + std::to_string(kMaxPrompt) +
         "\nmax_new_tokens = " + std::to_string(kMaxNew) + "\nhint = \"" + mode + "\"\n";
}

double counter(const std::string& name) {
  const auto c = sy::host_counters();
  auto it = c.find(name);
  return it == c.end() ? 0 : it->second;
}

// Tokens routed to the experts of both MoE layers.
double expert_activations() {
  double sum = 0;
  for (int layer = 0; layer < 2; ++layer)
    for (int e = 0; e < 4; ++e)
      sum += counter("expert_activations." + std::to_string(layer) + "." + std::to_string(e));
  return sum;
}

std::vector<uint64_t> submit_all(sy::engine::Engine& e, const std::vector<Item>& items) {
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < items.size(); ++i) {
    sy::engine::RequestSpec s;
    s.prompt.resize(items[i].prompt_len);
    for (size_t j = 0; j < s.prompt.size(); ++j) s.prompt[j] = int32_t((j * 29 + i * 13) % 250) + 3;
    s.max_new_tokens = items[i].max_new;
    s.simple_hint = items[i].hint;
    s.stop_at_eos = false;
    ids.push_back(e.submit(s));
  }
  return ids;
}

void run_to_end(sy::engine::Engine& e) {
  for (int steps = 0; !e.idle(); ++steps) {
    ASSERT_LT(steps, 20000) << "no progress";
    if (e.step().n_seqs == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

// Expert activations the requests must have caused: every token a request feeds through the
// model (its prompt and all its outputs but the last) selects k experts in each of 2 layers.
double expected_activations(const sy::engine::Engine& e, const std::vector<uint64_t>& ids,
                            const std::map<uint64_t, uint32_t>& k) {
  double sum = 0;
  for (uint64_t id : ids) {
    const auto& r = e.request(id);
    EXPECT_EQ(r.num_preemptions, 0u);  // a recompute would feed tokens twice
    sum += 2.0 * k.at(id) * (r.spec.prompt.size() + r.output.size() - 1);
  }
  return sum;
}

std::string build_error(const std::string& triage) {
  try {
    build(triage);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "built";
}

// "line:col" of `needle` in the config text, searched from `from` on.
std::string pos(const std::string& text, const std::string& needle, size_t from = 0) {
  const size_t at = text.find(needle, from);
  if (at == std::string::npos) return "?";
  const size_t line_start = text.rfind('\n', at);
  const size_t col = at - (line_start == std::string::npos ? 0 : line_start + 1) + 1;
  const auto line = std::count(text.begin(), text.begin() + at, '\n') + 1;
  return std::to_string(line) + ":" + std::to_string(col);
}

// "triage.toml:line:col: " of `needle` inside the [triage] part of a config (its tail).
std::string at(const std::string& triage, const std::string& needle,
               const std::string& preset = "moe-tiny", const std::string& origin = "triage.toml") {
  const std::string text = config_text(triage, preset);
  return origin + ":" + pos(text, needle, text.size() - triage.size()) + ": ";
}

}  // namespace

// ---- (a) the fallback switch ----

TEST(Triage, ForceFullSendsEveryRequestDownTheFullPathWithoutCallingTheRouter) {
  const auto items = labelled_set();
  // trust with these limits would make most of the set light: the switch must override it.
  auto v = build(rules("trust", true));
  ASSERT_TRUE(v->router);
  const double routing0 = counter("routing_ns"), full0 = counter("triage_full_requests");
  const double light0 = counter("triage_light_requests"), act0 = expert_activations();
  const auto ids = submit_all(*v->engine, items);
  run_to_end(*v->engine);
  std::map<uint64_t, uint32_t> k;
  for (uint64_t id : ids) {
    const auto& r = v->engine->request(id);
    EXPECT_EQ(r.spec.path, 0u);
    EXPECT_EQ(r.spec.n_expert_used, 0u);  // the model's default: 2
    EXPECT_EQ(r.finish, sy::engine::FinishReason::length);
    k[id] = 2;
  }
  EXPECT_EQ(v->router->calls(), 0u);
  EXPECT_EQ(counter("routing_ns"), routing0);
  EXPECT_EQ(counter("triage_full_requests") - full0, double(items.size()));
  EXPECT_EQ(counter("triage_light_requests"), light0);
  EXPECT_EQ(expert_activations() - act0, expected_activations(*v->engine, ids, k));
}

// ---- (b) the rule on a labelled set, per hint mode ----

TEST(Triage, PathOfEachRequestFollowsTheConfiguredRuleInEveryHintMode) {
  const auto items = labelled_set();
  for (const std::string mode : {"require", "trust", "ignore"}) {
    SCOPED_TRACE(mode);
    auto v = build(rules(mode));
    const double light0 = counter("triage_light_requests");
    const double routing0 = counter("routing_ns");
    const auto ids = submit_all(*v->engine, items);
    size_t n_light = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      const auto& s = v->engine->request(ids[i]).spec;
      const bool light = expect_light(mode, items[i]);
      n_light += light;
      EXPECT_EQ(s.path, light ? 1u : 0u) << "prompt " << items[i].prompt_len << ", max_new "
                                         << items[i].max_new << ", hint " << items[i].hint;
      EXPECT_EQ(s.n_expert_used, light ? 1u : 0u);
    }
    EXPECT_GT(n_light, 0u);
    EXPECT_LT(n_light, items.size());
    EXPECT_EQ(v->router->calls(), items.size());
    EXPECT_EQ(counter("triage_light_requests") - light0, double(n_light));
    EXPECT_GT(counter("routing_ns"), routing0);  // the route calls are timed
  }
}

TEST(Triage, RulesReportWhyAsReasonCodes) {
  auto v = build(rules("require"));
  std::map<int, double> before;
  for (int c = 1; c <= 5; ++c) before[c] = counter("triage_reason." + std::to_string(c));
  // light by length; prompt too long; output too long; not hinted.
  submit_all(*v->engine, {{4, 4, true}, {13, 4, true}, {4, 9, true}, {4, 4, false}});
  auto delta = [&](int c) { return counter("triage_reason." + std::to_string(c)) - before[c]; };
  EXPECT_EQ(delta(1), 1.0);
  EXPECT_EQ(delta(2), 0.0);
  EXPECT_EQ(delta(3), 1.0);
  EXPECT_EQ(delta(4), 1.0);
  EXPECT_EQ(delta(5), 1.0);
  auto t = build(rules("trust"));
  const double by_hint = counter("triage_reason.2");
  submit_all(*t->engine, {{40, 4, true}});
  EXPECT_EQ(counter("triage_reason.2") - by_hint, 1.0);
}

// ---- (c) the light path really uses fewer experts ----

TEST(Triage, LightRequestsActivateLight_expertsExpertsPerToken) {
  const auto items = labelled_set();
  auto v = build(rules("require"));
  const double act0 = expert_activations();
  const auto ids = submit_all(*v->engine, items);
  run_to_end(*v->engine);
  std::map<uint64_t, uint32_t> k;
  size_t n_light = 0;
  for (uint64_t id : ids) {
    const bool light = v->engine->request(id).spec.path == 1;
    n_light += light;
    k[id] = light ? 1 : 2;
  }
  ASSERT_GT(n_light, 0u);
  EXPECT_EQ(expert_activations() - act0, expected_activations(*v->engine, ids, k));

  // The same set all light (ignore, no length limit) against all full: half the activations.
  auto light = build(
      "[triage]\nplugin = \"triage_rules\"\nlight_experts = 1\n[triage.params]\n"
      "max_prompt_tokens = 1000\nmax_new_tokens = 1000\nhint = \"ignore\"\n");
  auto full = build("[triage]\nforce_full = true\nlight_experts = 1\n");
  double per[2];
  for (auto* variant : {&light, &full}) {
    const double a0 = expert_activations();
    submit_all(*(*variant)->engine, items);
    run_to_end(*(*variant)->engine);
    per[variant == &light ? 0 : 1] = expert_activations() - a0;
  }
  EXPECT_GT(per[0], 0);
  EXPECT_EQ(per[1], 2 * per[0]);
}

// ---- (d) bad routers and bad [triage] tables ----

TEST(Triage, RefusesBadRouterPluginsWithTheirReasons) {
  const std::string sched = kPlugins + "/switchyard_scheduler_fixed_window.so";
  EXPECT_EQ(build_error("[triage]\nplugin = \"" + sched + "\"\n"),
            "router plugin '" + sched.substr(0, 80) +
                "' is not a plugin name: use a name (letters, digits, '_', '-'), looked up as "
                "switchyard_router_<name>.so in plugin_dirs and $SWITCHYARD_PLUGIN_PATH, never a "
                "path");
  EXPECT_EQ(build_error("[triage]\nplugin = \"old_minor\"\n"),
            "plugin " + kTestPlugins +
                "/switchyard_router_old_minor.so: router plugins need ABI 1.2, the plugin "
                "negotiated 1.1");
  EXPECT_EQ(build_error("[triage]\nplugin = \"faulty\"\n[triage.params]\nfail_create = 1\n"),
            "router router_faulty: create: router_faulty: refusing to start");
  EXPECT_EQ(build_error("[triage]\nplugin = \"triage_rules\"\n[triage.params]\nmax_prompt = 3\n"),
            "router triage_rules: create: triage_rules: unknown parameter 'max_prompt' (known: "
            "max_prompt_tokens, max_new_tokens, hint)");
  EXPECT_EQ(
      build_error("[triage]\nplugin = \"triage_rules\"\n[triage.params]\nhint = \"sometimes\"\n"),
      "router triage_rules: create: triage_rules: bad value 'sometimes' for hint (expected "
      "require, trust or ignore)");
  EXPECT_EQ(
      build_error("[triage]\nplugin = \"triage_rules\"\n[triage.params]\nmax_new_tokens = -1\n"),
      "router triage_rules: create: triage_rules: bad value '-1' for max_new_tokens");
  EXPECT_EQ(build_error("[triage]\nplugin = \"nope\"\n")
                .rfind("router plugin 'nope' not found: no switchyard_router_nope.so in [", 0),
            0u);
  // A scheduler slot does not take a router either.
  sy::PluginHost host({kPlugins});
  try {
    host.load_file(kPlugins + "/switchyard_router_triage_rules.so", SY_PLUGIN_SCHEDULER);
    FAIL() << "loaded a router as a scheduler";
  } catch (const sy::PluginError& e) {
    EXPECT_EQ(std::string(e.what()), "plugin " + kPlugins +
                                         "/switchyard_router_triage_rules.so: is a router "
                                         "plugin, expected a scheduler plugin");
  }
}

TEST(Triage, RouterPluginRefusesAHostOlderThanRouters) {
  void* lib =
      dlopen((kPlugins + "/switchyard_router_triage_rules.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto entry = reinterpret_cast<sy_plugin_entry_fn>(dlsym(lib, SY_PLUGIN_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr);
  char buf[256] = {0};
  sy_plugin_info info{};
  info.struct_size = sizeof info;
  info.error_buf = buf;
  info.error_buf_size = sizeof buf;
  EXPECT_EQ(entry(SY_MAKE_VERSION(1, 1), nullptr, &info), SY_ERR_VERSION);
  EXPECT_EQ(std::string(buf), "triage_rules implements ABI 1." +
                                  std::to_string(SY_ABI_VERSION_MINOR) +
                                  " (needs at least 1.2), host offers 1.1");
  // A newer host: the plugin speaks its own minor.
  EXPECT_EQ(entry(SY_MAKE_VERSION(1, SY_ABI_VERSION_MINOR + 5), nullptr, &info), SY_OK);
  EXPECT_EQ(info.abi_version, SY_ABI_VERSION);
  EXPECT_EQ(info.kind, uint32_t(SY_PLUGIN_ROUTER));
  dlclose(lib);
}

TEST(Triage, ARouterFailingAtRunTimeCostsOnlyTheLightPath) {
  auto v = build("[triage]\nplugin = \"faulty\"\nlight_experts = 1\n");
  const double errors0 = counter("triage_errors"), act0 = expert_activations();
  std::vector<Item> items;
  for (uint32_t len = 8; len < 16; ++len) items.push_back({len, 4, false});
  const auto ids = submit_all(*v->engine, items);
  // 8..15: %4 == 1 fails, == 2 an unknown path, == 3 throws: 6 errors; 8 and 12 are light.
  EXPECT_EQ(counter("triage_errors") - errors0, 6.0);
  std::map<uint64_t, uint32_t> k;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& s = v->engine->request(ids[i]).spec;
    const bool light = items[i].prompt_len % 4 == 0;
    EXPECT_EQ(s.path, light ? 1u : 0u) << items[i].prompt_len;
    k[ids[i]] = light ? 1 : 2;
  }
  run_to_end(*v->engine);
  for (uint64_t id : ids)
    EXPECT_EQ(v->engine->request(id).finish, sy::engine::FinishReason::length);
  EXPECT_EQ(expert_activations() - act0, expected_activations(*v->engine, ids, k));
}

TEST(Triage, NoTriageTableLeavesEveryRequestFullAsBefore) {
  auto v = build("");
  EXPECT_FALSE(v->router);
  EXPECT_FALSE(v->engine->triage);
  const double full0 = counter("triage_full_requests");
  const auto ids = submit_all(*v->engine, {{4, 4, true}});
  EXPECT_EQ(v->engine->request(ids[0]).spec.path, 0u);
  EXPECT_EQ(counter("triage_full_requests"), full0);  // no hook at all
}

TEST(Triage, BadTriageTablesNameFileLineAndKey) {
  auto error_of = [](const std::string& triage) {
    try {
      sy::parse_config(config_text(triage), "triage.toml");
    } catch (const sy::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("parsed");
  };
  std::string t = "[triage]\nplugin = \"triage_rules\"\nforce_full = \"yes\"\n";
  EXPECT_EQ(error_of(t), at(t, "\"yes\"") + "triage.force_full: expected a boolean, got string");
  t = "[triage]\nplugin = \"triage_rules\"\nforce = true\n";
  EXPECT_EQ(error_of(t), at(t, "force =") + "triage.force: unknown key");
  t = "[triage]\nplugin = \"triage_rules\"\nlight_experts = 0\n";
  EXPECT_EQ(error_of(t), at(t, "0\n") + "triage.light_experts: must be in [1, 65536], got 0");
  t = "[triage]\nplugin = 7\n";
  EXPECT_EQ(error_of(t), at(t, "7\n") + "triage.plugin: expected a string, got integer");
  t = "[triage]\nlight_experts = 1\n";
  EXPECT_EQ(error_of(t), at(t, "[triage]") +
                             "triage.plugin: required key is missing (or set force_full = true)");
  t = "[triage]\nplugin = \"triage_rules\"\nparams = 3\n";
  EXPECT_EQ(error_of(t), at(t, "3\n") + "triage.params: expected a table, got integer");
  t = "[triage]\nplugin = \"triage_rules\"\n[triage.params]\nhint = [1]\n";
  EXPECT_EQ(error_of(t),
            at(t, "[1]") + "triage.params.hint: plugin parameters must be scalars, got array");
  try {  // a top-level key must come before the first table
    sy::parse_config("triage = 1\n" + config_text(""), "top.toml");
    FAIL() << "parsed";
  } catch (const sy::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "top.toml:1:10: triage: expected a table, got integer");
  }
  // force_full alone is a complete table: the switch without any router.
  EXPECT_EQ(error_of("[triage]\nforce_full = true\n"), "parsed");

  // light_experts against the model: MoE range, and refused for a dense model.
  t = "[triage]\nplugin = \"triage_rules\"\nlight_experts = 5\n";
  EXPECT_EQ(build_error(t), at(t, "5\n") + "triage.light_experts: must be in [1, 4] for " +
                                model_file("moe-tiny").string() +
                                " (4 experts, 2 per token by default), got 5");
  t = "[triage]\nplugin = \"triage_rules\"\nlight_experts = 1\n";
  try {
    sy::engine::Variant::build(sy::parse_config(config_text(t, "dense-tiny"), "dense.toml"));
    FAIL() << "built";
  } catch (const sy::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), at(t, "1\n", "dense-tiny", "dense.toml") +
                                         "triage.light_experts: the model " +
                                         model_file("dense-tiny").string() +
                                         " is dense (no MoE experts); the light path can only "
                                         "use fewer experts of an MoE model");
  }
}
