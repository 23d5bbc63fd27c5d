// The host's one error type. Everything inside the host throws sy::Error (a status and the
// message users see); a plugin call returns sy_status, and the boundary that calls it throws
// sy::Error with the plugin's last_error (host/backend.h, host/scheduler.h). Subclasses exist
// only where a caller catches them differently.
#pragma once

#include <stdexcept>
#include <string>

#include "switchyard/abi/types.h"

namespace sy {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, sy_status status = SY_ERR_INVALID_ARG)
      : std::runtime_error(message), status_(status) {}
  Error(sy_status status, const std::string& message) : Error(message, status) {}
  sy_status status() const { return status_; }

 private:
  sy_status status_;
};

}  // namespace sy
