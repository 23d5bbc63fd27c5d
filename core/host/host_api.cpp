#include "host/host_api.h"

#include <chrono>

#include "host/log.h"

namespace sy {
namespace {

Counters& process_counters() {
  static Counters c;
  return c;
}
thread_local Counters* t_scope = nullptr;

void api_log(sy_log_level level, const char* plugin, const char* message) {
  const auto lvl = level <= SY_LOG_TRACE  ? spdlog::level::trace
                   : level == SY_LOG_DEBUG ? spdlog::level::debug
                   : level == SY_LOG_INFO  ? spdlog::level::info
                   : level == SY_LOG_WARN  ? spdlog::level::warn
                                           : spdlog::level::err;
  logger()->log(lvl, "[{}] {}", plugin ? plugin : "?", message ? message : "");
}
int64_t api_now_ns() { return now_ns(); }
void api_counter_add(const char* name, double delta) {
  if (name) host_counter_add(name, delta);
}
void api_counter_add_to(void* ctx, const char* name, double delta) {
  if (name) host_counter_add_to(ctx, name, delta);
}

}  // namespace

void Counters::add(const std::string& name, double delta) {
  std::lock_guard<std::mutex> lock(mu_);
  values_[name] += delta;
}

std::map<std::string, double> Counters::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return values_;
}

double Counters::get(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = values_.find(name);
  return it == values_.end() ? 0 : it->second;
}

CounterScope::CounterScope(Counters* c) : prev_(t_scope) {
  if (c) t_scope = c;
}

CounterScope::~CounterScope() { t_scope = prev_; }

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void host_counter_add(const std::string& name, double delta) {
  process_counters().add(name, delta);
  if (t_scope) t_scope->add(name, delta);
}

void host_counter_add_to(void* ctx, const std::string& name, double delta) {
  process_counters().add(name, delta);
  if (ctx) static_cast<Counters*>(ctx)->add(name, delta);
}

std::map<std::string, double> host_counters() { return process_counters().snapshot(); }

const sy_host_api* host_api() {
  static const sy_host_api api = {sizeof(sy_host_api), SY_ABI_VERSION, api_log, api_now_ns,
                                  api_counter_add, api_counter_add_to};
  return &api;
}

}  // namespace sy
