// switchyard plugins: every plugin file found, and why any was refused. By default each file's
// metadata note is read without loading it; --load loads each one, which runs its code.
#include <cstdio>

#include "cli/commands.h"
#include "cli/options.h"
#include "host/capabilities.h"
#include "host/plugin_host.h"

namespace sy::cli {

int cmd_plugins(int argc, char** argv) {
  Command app("plugins",
              "Lists each plugin file from its metadata note, without loading it. --load loads "
              "each one to check its entry: loading a plugin runs its code (library constructors "
              "and entry) with your privileges, so use it only on files you trust.");
  std::string dir;
  bool verbose = false, load = false;
  app.add_option("--dir", dir, "searched before the default plugin folders");
  app.add_flag("--verbose", verbose, "path, ABI and capabilities of each plugin");
  app.add_flag("--load", load, "load each plugin to check its entry (runs its code)");
  if (!parse(app, argc, argv)) return 0;
  std::vector<std::filesystem::path> dirs;
  if (!dir.empty()) dirs.emplace_back(dir);
  for (auto& d : PluginHost::default_dirs()) dirs.push_back(d);
  PluginHost host(dirs);
  std::printf("search path:");
  for (const auto& d : dirs) std::printf(" %s", d.c_str());
  std::printf("\n");
  if (load)
    std::printf(
        "loading each plugin: this runs its code (library constructors, then its entry) in "
        "this process\n");
  else
    std::printf(
        "read from each file's metadata note; nothing is loaded (loading a plugin runs its "
        "code: --load)\n");
  for (const auto& r : host.scan(load)) {
    if (r.loaded) {
      std::printf("  ok       %-10s %-14s %-6s ABI %s  %s\n", plugin_kind_name(r.kind), r.name.c_str(),
                  r.version.c_str(), version_string(r.abi_version).c_str(), r.description.c_str());
      if (verbose) {
        std::printf("           path          %s\n", r.path.c_str());
        std::printf("           abi           %s (host %s)\n",
                    version_string(r.abi_version).c_str(), version_string(SY_ABI_VERSION).c_str());
        std::printf("           capabilities  %s (0x%llx)\n",
                    capability_names(r.capabilities).c_str(),
                    static_cast<unsigned long long>(r.capabilities));
      }
    } else if (r.unknown) {
      std::printf("  unknown  %s\n", r.refusal.c_str());
    } else {
      std::printf("  refused  %s\n", r.refusal.c_str());
    }
  }
  return 0;
}

}  // namespace sy::cli
