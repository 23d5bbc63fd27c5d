#include "host/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <stdexcept>

#include "switchyard/common/error.h"

namespace sy {

std::shared_ptr<spdlog::logger> logger() {
  // Logs go to stderr so that generated text on stdout stays clean.
  static std::shared_ptr<spdlog::logger> log = [] {
    auto l = spdlog::stderr_color_mt("switchyard");
    l->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    l->set_level(spdlog::level::warn);
    return l;
  }();
  return log;
}

void set_log_level(const std::string& level) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    throw sy::Error("unknown log level '" + level +
                    "' (expected trace, debug, info, warn, error or off)");
  logger()->set_level(lvl);
}

}  // namespace sy
