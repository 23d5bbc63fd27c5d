// The plugin host refuses bad plugins with the reason and keeps running on what it had.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include <sys/stat.h>

#include "host/backend.h"
#include "host/plugin_host.h"
#include "host/plugin_note.h"
#include "host/scheduler.h"
#include "log_capture.h"

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
  EXPECT_EQ(refusal(host, junk),
            "plugin " + junk.string() + ": not an ELF file (refused without loading it)");
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
  const auto reports = host.scan(/*load=*/true);
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

// A note that says the plugin cannot work here refuses it before dlopen: its constructor, which
// would create the marker file, never runs.
TEST(PluginHost, RefusesFromItsMetadataNoteWithoutRunningIt) {
  const fs::path marker = fs::temp_directory_path() / "sy_note_major_marker";
  fs::remove(marker);
  setenv("SY_NOTE_MARKER", marker.c_str(), 1);
  PluginHost host({kBad});
  const fs::path p = kBad / "switchyard_scheduler_note_major.so";
  EXPECT_EQ(refusal(host, p), "plugin " + p.string() +
                                  ": ABI major version mismatch: plugin implements 2.0, host "
                                  "implements " +
                                  kHostVersion + " (from its metadata note; not loaded)");
  for (const auto& r : host.scan()) EXPECT_FALSE(r.loaded && r.name == "note_major");
  EXPECT_FALSE(fs::exists(marker));
  // The kind is checked from the note too.
  PluginHost good({kPlugins});
  const fs::path sched = kPlugins / "switchyard_scheduler_dynamic.so";
  EXPECT_EQ(refusal(good, sched), "loaded");
  try {
    good.load_file(kPlugins / "switchyard_router_triage_rules.so", SY_PLUGIN_BACKEND);
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_EQ(std::string(e.what()), "plugin " +
                                         (kPlugins / "switchyard_router_triage_rules.so").string() +
                                         ": is a router plugin, expected a backend plugin");
  }
  unsetenv("SY_NOTE_MARKER");
}

TEST(PluginHost, NoteAndEntryMustAgree) {
  PluginHost host({kBad});
  const fs::path p = kBad / "switchyard_scheduler_note_mismatch.so";
  EXPECT_EQ(refusal(host, p), "plugin " + p.string() +
                                  ": its metadata note (scheduler 'other') disagrees with its "
                                  "entry (scheduler 'note_mismatch')");
}

// Every in-tree plugin carries a note equal to what its entry reports (the description its
// prefix).
TEST(PluginHost, InTreePluginsCarryTheirNote) {
  PluginHost host({kPlugins});
  size_t n = 0;
  for (const auto& from_note : host.scan()) {
    ASSERT_TRUE(from_note.loaded) << from_note.refusal;
    EXPECT_TRUE(from_note.from_note);
    auto p = host.load_file(from_note.path);
    EXPECT_EQ(p->name(), from_note.name);
    EXPECT_EQ(p->kind(), from_note.kind);
    EXPECT_EQ(p->version(), from_note.version);
    // The entry may add what it found at load (cpu_onednn: its kernel path) after the note's.
    EXPECT_EQ(p->description().rfind(from_note.description, 0), 0u) << p->description();
    EXPECT_EQ(p->capabilities(), from_note.capabilities);
    EXPECT_EQ(p->abi_version(), from_note.abi_version);
    ++n;
  }
  EXPECT_GE(n, 5u);  // cpu_ref, cpu_onednn, fixed_window, dynamic, triage_rules (+ GPU ones)
}

TEST(PluginHost, APluginNameIsANameNotAPath) {
  PluginHost host({kPlugins});
  for (const std::string bad : {kPlugins.string() + "/switchyard_scheduler_fixed_window.so",
                                std::string("../plugins/fixed_window"), std::string("a b"),
                                std::string(""), std::string("fixed_window.so")}) {
    try {
      host.load(SY_PLUGIN_SCHEDULER, bad);
      FAIL() << bad;
    } catch (const PluginError& e) {
      EXPECT_EQ(std::string(e.what()),
                "scheduler plugin '" + bad.substr(0, 80) +
                    "' is not a plugin name: use a name (letters, digits, '_', '-'), looked up "
                    "as switchyard_scheduler_<name>.so in plugin_dirs and "
                    "$SWITCHYARD_PLUGIN_PATH, never a path");
    }
  }
}

TEST(PluginHost, SearchPathIsPluginDirsThenTheEnvironment) {
  setenv("SWITCHYARD_PLUGIN_PATH", "/env/a::/env/b", 1);
  EXPECT_EQ(PluginHost::search_path({"/cfg"}), (std::vector<fs::path>{"/cfg", "/env/a", "/env/b"}));
  const auto fallback = PluginHost::search_path({});
  ASSERT_EQ(fallback.size(), 3u);
  EXPECT_EQ(fallback[0].filename(), "plugins");  // the installation's, next to the executable
  unsetenv("SWITCHYARD_PLUGIN_PATH");
}

TEST(PluginHost, WarnsAboutADirectoryEveryoneCanWrite) {
  const fs::path dir = fs::temp_directory_path() / "sy_plugin_world_writable";
  fs::create_directories(dir);
  fs::copy_file(kPlugins / "switchyard_scheduler_fixed_window.so",
                dir / "switchyard_scheduler_fixed_window.so", fs::copy_options::overwrite_existing);
  ::chmod(dir.c_str(), 0777);
  sy::test::LogCapture log;
  PluginHost host({dir});
  host.locate(SY_PLUGIN_SCHEDULER, "fixed_window");
  EXPECT_NE(log.text().find("plugin directory " + dir.string() +
                            " is writable by every user: anyone on this machine can place code "
                            "there that this process will load and run"),
            std::string::npos)
      << log.text();
  fs::remove_all(dir);
}

TEST(PluginNote, RefusesMalformedFilesWithoutQuotingThem) {
  sy::PluginNote n;
  std::string why;
  const std::string passwd = "root:x:0:0:root:/root:/bin/bash\n";
  EXPECT_EQ(
      sy::parse_plugin_note(reinterpret_cast<const uint8_t*>(passwd.data()), passwd.size(), n, why),
      sy::NoteStatus::invalid);
  EXPECT_EQ(why, "not an ELF file");
  // A real plugin, cut short inside its section table.
  const fs::path p = kPlugins / "switchyard_scheduler_fixed_window.so";
  std::ifstream in(p, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_EQ(sy::parse_plugin_note(bytes.data(), bytes.size(), n, why), sy::NoteStatus::found);
  EXPECT_EQ(n.name, "fixed_window");
  uint64_t shoff = 0;  // e_shoff: cut inside the first section header
  std::memcpy(&shoff, bytes.data() + 0x28, sizeof shoff);
  ASSERT_LT(shoff + 32, bytes.size());
  EXPECT_EQ(sy::parse_plugin_note(bytes.data(), shoff + 32, n, why), sy::NoteStatus::invalid);
  EXPECT_EQ(why, "its section table lies outside the file");
}
