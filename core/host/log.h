// The host's logger (spdlog). Plugins log into it through sy_host_api.log.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace sy {

std::shared_ptr<spdlog::logger> logger();
// "trace" | "debug" | "info" | "warn" | "error" | "off"; throws std::invalid_argument otherwise.
void set_log_level(const std::string& level);

}  // namespace sy
