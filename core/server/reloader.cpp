#include "server/reloader.h"

#include <fmt/ranges.h>
#include <sys/stat.h>
#include <algorithm>
#include <chrono>

#include "config/toml_reader.h"
#include "host/host_api.h"
#include "host/log.h"
#include "server/signals.h"
#include "switchyard/common/error.h"

namespace sy::server {
namespace fs = std::filesystem;

namespace {

// Inode, size and mtime: an edit that replaces the file (rename) or lands within the
// filesystem's timestamp granularity still changes it.
std::string stamp_of(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return "missing";
  return std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

// One greedy token through the new engine before it takes traffic: catches a scheduler that
// never schedules or returns invalid plans, and a backend that fails its first forward pass.
void validate(engine::Variant& v, const std::string& name) {
  engine::Engine& e = *v.engine;
  engine::RequestSpec s;
  s.prompt = {v.tokenizer->vocab().bos >= 0 ? v.tokenizer->vocab().bos : 0};
  s.max_new_tokens = 1;
  s.stop_at_eos = false;
  const uint64_t id = e.submit(s);
  const int64_t give_up = now_ns() + 10'000'000'000;
  while (!e.idle() && now_ns() < give_up) {
    const auto st = e.step();
    if (st.n_seqs == 0)
      std::this_thread::sleep_for(
          std::chrono::nanoseconds(std::clamp<int64_t>(st.wait_ns, 0, 10'000'000)));
  }
  const bool done = e.request(id).finish != engine::FinishReason::none;
  e.cancel(id);
  e.forget(id);
  if (!done)
    throw sy::Error("variant '" + name +
                    "': validation request did not finish within 10 s (scheduler " +
                    v.scheduler->name() + ")");
  if (e.invalid_plans())
    throw sy::Error("variant '" + name + "': scheduler " + v.scheduler->name() +
                    " returned an invalid plan for the validation request");
}

}  // namespace

Reloader::Reloader(fs::path config_path, Router& router, ServeMetrics& metrics)
    : path_(std::move(config_path)), router_(router), metrics_(metrics) {
  stamp_ = stamp_of(path_);
}

Reloader::~Reloader() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<EngineRunner> Reloader::make_runner(const ServeVariant& v, uint32_t max_queue,
                                                    uint64_t generation) {
  std::unique_ptr<engine::Variant> var;
  try {
    var = engine::Variant::build(v.config);
  } catch (const std::exception& e) {
    throw sy::Error("variant '" + v.name + "': " + e.what());
  }
  if (!var->tokenizer)
    throw sy::Error("variant '" + v.name + "': " + v.config.model.path + " has no text vocabulary");
  if (block_observer_) var->cache->pool().set_observer(block_observer_);
  validate(*var, v.name);
  return std::make_shared<EngineRunner>(v.name, std::move(var), max_queue, &metrics_, generation);
}

std::shared_ptr<Deployment> Reloader::build(const ServeConfig& cfg, const Deployment* old,
                                            ReloadResult& res) {
  auto d = std::make_shared<Deployment>();
  uint64_t next;
  {
    std::lock_guard<std::mutex> lk(mu_);
    next = generation_ + 1;  // reloads are serialised, so install() gives it this number
  }
  d->baseline = cfg.serve.baseline;
  d->shadow = cfg.serve.shadow;
  d->request_timeout_s = cfg.serve.request_timeout_s;
  for (const auto& v : cfg.variants) {
    Deployment::Entry e{v.name, v.weight,
                        fingerprint(v.config) + "max_queue=" + std::to_string(cfg.serve.max_queue),
                        nullptr};
    if (const Deployment::Entry* o = old ? old->find(v.name) : nullptr;
        o && o->fingerprint == e.fingerprint) {
      e.runner = o->runner;  // unchanged: keeps serving without a reload
      res.kept.push_back(v.name);
    } else {
      e.runner = make_runner(v, cfg.serve.max_queue, next);
      res.loaded.push_back(v.name);
    }
    d->variants.push_back(std::move(e));
  }
  return d;
}

void Reloader::install(std::shared_ptr<Deployment> d, ReloadResult& res) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    d->generation = ++generation_;
  }
  std::shared_ptr<const Deployment> old = router_.install(d);
  res.generation = d->generation;
  if (!old) return;
  std::lock_guard<std::mutex> lk(mu_);
  for (const auto& e : old->variants) {
    bool still = false;
    for (const auto& n : d->variants) still |= n.runner == e.runner;
    if (still) continue;
    e.runner->start_drain();  // new requests now go to the new deployment
    draining_.push_back(e.runner);
    res.retired.push_back(e.name);
  }
}

void Reloader::install_initial(const ServeConfig& cfg, std::string text) {
  std::lock_guard<std::mutex> rl(reload_mu_);
  serving_text_ = std::move(text);
  ReloadResult res;
  res.trigger = "startup";
  install(build(cfg, nullptr, res), res);
  res.ok = true;
  std::lock_guard<std::mutex> lk(mu_);
  last_ = res;
}

ReloadResult Reloader::reload(const std::string& trigger) {
  std::lock_guard<std::mutex> rl(reload_mu_);
  ReloadResult res;
  res.trigger = trigger;
  {
    std::lock_guard<std::mutex> lk(mu_);
    stamp_ = stamp_of(path_);  // this version is handled, whichever trigger came first
  }
  try {
    const std::string text = read_text_file(path_);
    if (const auto cur = router_.current(); cur && text == serving_text_) {
      // Nothing changed (a touch, a save without edits, a repeated SIGHUP): keep everything,
      // the rollback state included.
      res.ok = true;
      res.changed = false;
      res.generation = cur->generation;
      for (const auto& e : cur->variants) res.kept.push_back(e.name);
      logger()->info("reload ({}): {} is unchanged; generation {} keeps serving", trigger,
                     path_.string(), res.generation);
      std::lock_guard<std::mutex> lk(mu_);
      last_ = res;
      return res;
    }
    const ServeConfig cfg = parse_serve_config(text, path_.string());
    const auto old = router_.current();
    install(build(cfg, old.get(), res), res);
    serving_text_ = text;
    res.ok = true;
    logger()->info("reload ({}): generation {}: loaded [{}], kept [{}], draining [{}]", trigger,
                   res.generation, fmt::join(res.loaded, ", "), fmt::join(res.kept, ", "),
                   fmt::join(res.retired, ", "));
  } catch (const std::exception& e) {
    res.ok = false;
    res.error = e.what();
    res.loaded.clear();
    res.kept.clear();
    if (const auto cur = router_.current()) res.generation = cur->generation;
    logger()->error("reload ({}) refused, generation {} keeps serving: {}", trigger, res.generation,
                    res.error);
  }
  metrics_.swap(res.ok);
  std::lock_guard<std::mutex> lk(mu_);
  last_ = res;
  return res;
}

void Reloader::retire_drained() {
  std::vector<std::shared_ptr<EngineRunner>> done;
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto it = draining_.begin(); it != draining_.end();) {
      if ((*it)->wait_drained(0)) {
        done.push_back(std::move(*it));
        it = draining_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& r : done) logger()->info("variant {} drained; unloading", r->name());
  done.clear();  // destroyed here (outside the lock) unless a request handler still holds one
}

void Reloader::watch(uint32_t poll_ms, bool sighup) {
  const auto tick = std::chrono::milliseconds(poll_ms ? std::min<uint32_t>(poll_ms, 100) : 100);
  auto next_poll = std::chrono::steady_clock::now();
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(mu_);
      if (stop_cv_.wait_for(lk, tick, [&] { return stop_; })) return;
    }
    retire_drained();
    if (sighup && take_sighup()) reload("sighup");
    if (poll_ms && std::chrono::steady_clock::now() >= next_poll) {
      next_poll = std::chrono::steady_clock::now() + std::chrono::milliseconds(poll_ms);
      bool changed;
      {
        std::lock_guard<std::mutex> lk(mu_);
        changed = stamp_of(path_) != stamp_;
      }
      if (changed) reload("file");
    }
  }
}

void Reloader::start(uint32_t poll_ms, bool sighup) {
  thread_ = std::thread([this, poll_ms, sighup] { watch(poll_ms, sighup); });
}

void Reloader::shutdown_all() {
  std::vector<std::shared_ptr<EngineRunner>> all;
  if (const auto d = router_.current())
    for (const auto& e : d->variants) all.push_back(e.runner);
  {
    std::lock_guard<std::mutex> lk(mu_);
    all.insert(all.end(), draining_.begin(), draining_.end());
  }
  for (auto& r : all) r->shutdown();
}

ReloadResult Reloader::last() const {
  std::lock_guard<std::mutex> lk(mu_);
  return last_;
}

std::vector<RunnerSnapshot> Reloader::snapshots() const {
  std::vector<RunnerSnapshot> out;
  if (const auto d = router_.current())
    for (const auto& e : d->variants) out.push_back(e.runner->snapshot());
  std::lock_guard<std::mutex> lk(mu_);
  for (const auto& r : draining_) out.push_back(r->snapshot());
  return out;
}

size_t Reloader::draining() const {
  std::lock_guard<std::mutex> lk(mu_);
  return draining_.size();
}

}  // namespace sy::server
