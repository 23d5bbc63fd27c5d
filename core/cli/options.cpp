#include "cli/options.h"

#include <cstdio>

namespace sy::cli {

Command::Command(const std::string& name, const std::string& what)
    : CLI::App(what, "switchyard " + name) {
  option_defaults()->always_capture_default();
}

bool parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc - 1, argv + 1);
    return true;
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return false;
  } catch (const CLI::ExtrasError& e) {
    for (const std::string& r : app.remaining())
      if (r.rfind("--", 0) == 0) throw UsageError("unknown option " + r.substr(0, r.find('=')));
    throw UsageError(e.what());
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
}

}  // namespace sy::cli
