// Hot swap: builds the variants a config names beside the running ones (on the calling thread),
// installs them in the router in one step, drains the replaced runners and drops them once
// idle (their plugins unload with the last Variant that holds them). A config that fails to
// parse, load or validate changes nothing: the old variants keep serving and the error is
// logged, counted and returned. Triggers: a change of the file (polled), SIGHUP, or a call.
// A trigger that finds the file's content unchanged since the deployment in service was read
// does nothing (no generation, no swap, a rollback stays in force).
#pragma once

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/router.h"
#include "server/serve_config.h"
#include "server/serve_metrics.h"

namespace sy::server {

struct ReloadResult {
  bool ok = false;
  std::string trigger;                             // startup, file, sighup, admin
  std::string error;                               // why it was refused (ok = false)
  bool changed = true;  // false: the content was that of the deployment in service; no-op
  uint64_t generation = 0;                         // of the deployment serving afterwards
  std::vector<std::string> loaded, kept, retired;  // variant names
};

class Reloader {
 public:
  Reloader(std::filesystem::path config_path, Router& router, ServeMetrics& metrics);
  ~Reloader();
  // The first deployment; throws ConfigError or the load error. `text`: the file's content it
  // was parsed from (a later reload of the same content is a no-op).
  void install_initial(const ServeConfig& cfg, std::string text = "");
  // Reads the config file again and swaps; never throws. Serialised with other reloads.
  ReloadResult reload(const std::string& trigger);
  // Polls the file every `poll_ms` (0: never) and SIGHUP when `sighup` is set, and retires
  // drained runners, on a background thread until destruction.
  void start(uint32_t poll_ms, bool sighup);

  // Every variant built from now on reports its prefix cache's changes to `o` (KV events);
  // null: none. `o` must outlive the variants.
  void set_block_observer(model::BlockObserver* o) { block_observer_ = o; }

  // Stops every runner, active and draining, aborting what they still run (server stop).
  void shutdown_all();
  ReloadResult last() const;
  std::vector<RunnerSnapshot> snapshots() const;  // active and draining runners
  size_t draining() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::shared_ptr<Deployment> build(const ServeConfig& cfg, const Deployment* old,
                                    ReloadResult& res);
  std::shared_ptr<EngineRunner> make_runner(const ServeVariant& v, uint32_t max_queue,
                                            uint64_t generation);
  void install(std::shared_ptr<Deployment> d, ReloadResult& res);
  void retire_drained();
  void watch(uint32_t poll_ms, bool sighup);

  const std::filesystem::path path_;
  Router& router_;
  ServeMetrics& metrics_;
  std::mutex reload_mu_;  // one reload at a time
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<EngineRunner>> draining_;
  ReloadResult last_;
  uint64_t generation_ = 0;
  std::string stamp_;  // the config file's identity when last read (inode, size, mtime)
  std::string serving_text_;  // the config text the deployment in service was built from
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
  model::BlockObserver* block_observer_ = nullptr;
};

}  // namespace sy::server
