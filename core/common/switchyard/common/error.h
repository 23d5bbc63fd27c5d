// The host's and the core's one error family. Everything they throw is sy::Error (a status and
// the message users see) or one of its subclasses, which exist only where a caller catches them
// differently:
//   sy::Bug                 an invariant of Switchyard's own broke (SY_ERR_INTERNAL), never the
//                           input's fault
//   sy::ConfigError         a TOML config (config/config.h): file, line and key in the message
//   sy::gguf::Error         a GGUF file (gguf/gguf.h)
//   sy::PluginError         a plugin refused at load (host/plugin_host.h)
//   sy::wire::WireError     a scheduler child's message (host/plan_wire.h)
//   sy::text::ChatTemplateError  a chat template that fails to render (text/chat_template.h)
//   sy::cli::UsageError     a command line (cli/options.h): exit status 2
// A plugin call returns sy_status; the boundary that calls it throws sy::Error with the plugin's
// last_error (host/backend.h, host/scheduler.h). Input a caller can fix has SY_ERR_INVALID_ARG
// (the default); what the machine refused says so (SY_ERR_NOT_FOUND, SY_ERR_UNAVAILABLE,
// SY_ERR_UNSUPPORTED, SY_ERR_DEVICE).
//
// What else may pass through, by design:
//   - jinja::Error and grammar::Error: those layers stand alone (they see only nlohmann/json);
//     text and the server catch them where they call in;
//   - server::ApiError (server/api_error.h): an HTTP answer in flight, caught by the handler;
//   - the standard library's own (std::bad_alloc, std::stoi's, std::filesystem's) and the
//     libraries' (nlohmann::json, toml++, CLI11), caught at the edges that call them.
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

class Bug : public Error {
 public:
  explicit Bug(const std::string& message) : Error(message, SY_ERR_INTERNAL) {}
};

}  // namespace sy
