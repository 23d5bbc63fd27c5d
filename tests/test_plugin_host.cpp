// The plugin host refuses bad plugins with the reason and keeps running on what it had.
#include <gtest/gtest.h>

#include <fstream>

#include "host/backend.h"
#include "host/plugin_host.h"
#include "host/scheduler.h"

namespace fs = std::filesystem;
using sy::PluginError;
using sy::PluginHost;

namespace {

const fs::path kPlugins = SWITCHYARD_PLUGIN_DIR;
const fs::path kBad = SWITCHYARD_TEST_PLUGIN_DIR;
const std::string kHostVersion = sy::version_string(SY_ABI_VERSION);

std::string refusal(const PluginHost& host, const fs::path& path) {
  try {
    host.load_file(path);
  } catch (const PluginError& e) {
    return e.what();
  }
  return "loaded";
}

// A plan call through the loaded scheduler proves the plugin still works.
void expect_scheduler_works(sy::Scheduler& s) {
  sy_sched_request r{};
  r.struct_size = sizeof r;
  r.id = 7;
  r.prompt_len = 5;
  r.max_new_tokens = 3;
  sy_sched_view v{};
  v.struct_size = sizeof v;
  v.request_size = sizeof r;
  v.now_ns = 1'000'000'000;
  v.waiting = &r;
  v.n_waiting = 1;
  v.kv_block_size = 16;
  v.kv_total_blocks = v.kv_free_blocks = 8;
  v.max_batch_tokens = 64;
  v.max_seqs = 4;
  sy_sched_entry e[4];
  uint64_t pre[4];
  sy_sched_plan p{};
  p.struct_size = sizeof p;
  p.entries = e;
  p.entries_capacity = 4;
  p.preempt = pre;
  p.preempt_capacity = 4;
  ASSERT_NO_THROW(s.plan(v, p));
  ASSERT_EQ(p.n_entries, 1u);
  EXPECT_EQ(e[0].id, 7u);
  EXPECT_EQ(e[0].num_tokens, 5u);
}

}  // namespace

TEST(PluginHost, RefusesWrongMajorVersion) {
  PluginHost host({kBad});
  const fs::path p = kBad / "switchyard_scheduler_bad_major.so";
  EXPECT_EQ(refusal(host, p),
            "plugin " + p.string() + ": ABI major version mismatch: plugin implements 2.0, host implements " + kHostVersion);
}

TEST(PluginHost, RefusesMissingEntrySymbol) {
  PluginHost host({kBad});
  const fs::path p = kBad / "switchyard_scheduler_no_entry.so";
  EXPECT_EQ(refusal(host, p), "plugin " + p.string() + ": missing entry symbol 'sy_plugin_entry'");
}

TEST(PluginHost, RefusesFailingInitWithItsReason) {
  PluginHost host({kBad});
  const fs::path p = kBad / "switchyard_scheduler_init_fail.so";
  EXPECT_EQ(refusal(host, p), "plugin " + p.string() +
                                  ": init failed (status 7): init_fail: required resource "
                                  "/dev/nonexistent is missing");
}

TEST(PluginHost, RefusesNewerMinorThanHost) {
  PluginHost host({kBad});
  const fs::path p = kBad / "switchyard_scheduler_newer_minor.so";
  const std::string newer = "1." + std::to_string(SY_ABI_VERSION_MINOR + 1);
  EXPECT_EQ(refusal(host, p), "plugin " + p.string() + ": plugin implements ABI " + newer +
                                  ", newer than the host's " + kHostVersion);
}

TEST(PluginHost, RefusesFilesThatAreNotLibraries) {
  const fs::path dir = fs::temp_directory_path() / "sy_plugin_host_test";
  fs::create_directories(dir);
  const fs::path junk = dir / "switchyard_scheduler_junk.so";
  std::ofstream(junk) << "not an ELF file";
  PluginHost host({dir});
  const std::string why = refusal(host, junk);
  EXPECT_EQ(why.rfind("plugin " + junk.string() + ": cannot be loaded: ", 0), 0u) << why;
  EXPECT_EQ(refusal(host, dir / "absent.so"), "plugin " + (dir / "absent.so").string() + ": no such file");
  fs::remove_all(dir);
}

TEST(PluginHost, RefusesWrongKindAndUnknownNames) {
  PluginHost host({kPlugins});
  const fs::path p = kPlugins / "switchyard_scheduler_fixed_window.so";
  try {
    host.load_file(p, SY_PLUGIN_BACKEND);
    FAIL() << "loaded a scheduler as a backend";
  } catch (const PluginError& e) {
    EXPECT_EQ(std::string(e.what()),
              "plugin " + p.string() + ": is a scheduler plugin, expected a backend plugin");
  }
  try {
    host.load(SY_PLUGIN_SCHEDULER, "nonesuch");
    FAIL() << "found a plugin that does not exist";
  } catch (const PluginError& e) {
    EXPECT_EQ(std::string(e.what()), "scheduler plugin 'nonesuch' not found: no "
                                     "switchyard_scheduler_nonesuch.so in [" + kPlugins.string() + "]");
  }
}

TEST(PluginHost, KeepsRunningOnWhatItHadAfterRefusals) {
  PluginHost host({kBad, kPlugins});
  auto good = host.load(SY_PLUGIN_SCHEDULER, "fixed_window");
  sy::Scheduler before(good, {});
  for (const char* bad : {"bad_major", "no_entry", "init_fail", "newer_minor"})
    EXPECT_THROW(host.load(SY_PLUGIN_SCHEDULER, bad), PluginError) << bad;
  expect_scheduler_works(before);  // loaded before the refusals, still works
  sy::Scheduler after(host.load(SY_PLUGIN_SCHEDULER, "fixed_window"), {{"max_batch", "2"}});
  expect_scheduler_works(after);
  sy::Backend backend(host.load(SY_PLUGIN_BACKEND, "cpu_ref"), {});
  EXPECT_EQ(backend.device().available, 1u);
  EXPECT_TRUE(backend.missing_ops().empty());
}

// dlopen maps a library once per process: every host shares the one live Plugin, so the entry
// runs once and letting go of one user cannot shut the plugin down under another.
TEST(PluginHost, ALoadedLibraryIsOnePluginAcrossHosts) {
  PluginHost a({kPlugins}), b({kPlugins});
  auto first = a.load(SY_PLUGIN_SCHEDULER, "fixed_window");
  auto second = b.load(SY_PLUGIN_SCHEDULER, "fixed_window");
  EXPECT_EQ(first.get(), second.get());
  const fs::path p = kPlugins / "switchyard_scheduler_fixed_window.so";
  try {
    b.load_file(p, SY_PLUGIN_BACKEND);  // the shared Plugin is still checked for its kind
    FAIL() << "loaded a scheduler as a backend";
  } catch (const PluginError& e) {
    EXPECT_EQ(std::string(e.what()),
              "plugin " + p.string() + ": is a scheduler plugin, expected a backend plugin");
  }
  first.reset();  // the other user's plugin keeps working
  {
    sy::Scheduler still(second, {});
    expect_scheduler_works(still);
  }
  second.reset();  // the last user: unloaded; the next load makes a new handshake
  sy::Scheduler again(a.load(SY_PLUGIN_SCHEDULER, "fixed_window"), {});
  expect_scheduler_works(again);
}

TEST(PluginHost, ScanReportsEveryCandidateWithItsReason) {
  PluginHost host({kBad});
  const auto reports = host.scan();
  std::map<std::string, std::string> by_file;
  for (const auto& r : reports) by_file[r.path.filename().string()] = r.loaded ? "ok" : r.refusal;
  EXPECT_EQ(by_file.count("abi_c99_probe.so"), 0u);  // does not look like a plugin
  EXPECT_NE(by_file["switchyard_scheduler_bad_major.so"].find("ABI major version mismatch"), std::string::npos);
  EXPECT_NE(by_file["switchyard_scheduler_no_entry.so"].find("missing entry symbol"), std::string::npos);
  EXPECT_NE(by_file["switchyard_scheduler_init_fail.so"].find("init failed"), std::string::npos);
  EXPECT_NE(by_file["switchyard_scheduler_newer_minor.so"].find("newer than the host"), std::string::npos);
}

TEST(PluginHost, SchedulerCreateErrorsCarryThePluginMessage) {
  PluginHost host({kPlugins});
  auto p = host.load(SY_PLUGIN_SCHEDULER, "fixed_window");
  try {
    sy::Scheduler s(p, {{"max_batchh", "4"}});
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_EQ(std::string(e.what()), "scheduler fixed_window: create: fixed_window: unknown parameter "
                                     "'max_batchh' (known: max_batch, wait_window_ms)");
  }
}
