#include "host/host_api.h"

#include <chrono>
#include <mutex>

#include "host/log.h"

namespace sy {
namespace {

std::mutex counters_mu;
std::map<std::string, double>& counters() {
  static std::map<std::string, double> c;
  return c;
}

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

}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void host_counter_add(const std::string& name, double delta) {
  std::lock_guard<std::mutex> lock(counters_mu);
  counters()[name] += delta;
}

std::map<std::string, double> host_counters() {
  std::lock_guard<std::mutex> lock(counters_mu);
  return counters();
}

const sy_host_api* host_api() {
  static const sy_host_api api = {sizeof(sy_host_api), SY_ABI_VERSION, api_log, api_now_ns,
                                  api_counter_add};
  return &api;
}

}  // namespace sy
