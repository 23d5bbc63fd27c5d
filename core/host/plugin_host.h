// Finds plugins by name in configured directories, loads them with Boost.DLL (RTLD_NOW |
// RTLD_LOCAL), runs the ABI handshake and refuses a bad plugin with the reason, leaving the host
// and every plugin already loaded untouched. Loading a plugin runs its code (library
// constructors, then its entry) with this process's privileges, so a plugin's metadata note
// (plugin_note.h) is checked first: a file whose note says it cannot work here is refused
// unloaded. A plugin name is a name, never a path.
#pragma once

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "switchyard/abi/plugin.h"
#include "switchyard/common/error.h"

namespace boost::dll {
class shared_library;
}

namespace sy {

// A plugin refused (not found, bad handshake, failed create): callers that load plugins catch it
// apart from other errors to report the refusal and go on.
class PluginError : public Error {
 public:
  explicit PluginError(const std::string& message, sy_status status = SY_ERR_UNAVAILABLE)
      : Error(status, message) {}
};

const char* plugin_kind_name(uint32_t kind);  // "backend", "scheduler", "router"
std::string version_string(uint32_t packed);  // "1.0"

// A loaded plugin. Keeps the library mapped while any backend or scheduler made from it lives.
// One per library file in the process: loading a loaded file again returns the same Plugin.
class Plugin {
 public:
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const std::string& description() const { return description_; }
  const std::filesystem::path& path() const { return path_; }
  uint32_t kind() const { return info_.kind; }
  uint32_t abi_version() const { return info_.abi_version; }
  uint64_t capabilities() const { return info_.capabilities; }
  // The plugin's table for its kind (nullptr for the other kinds), as a host-sized copy whose
  // members past the plugin's struct_size are NULL (abi_table.h).
  const sy_backend_iface* backend_iface() const;
  const sy_scheduler_iface* scheduler_iface() const;
  const sy_router_iface* router_iface() const;

 private:
  friend class PluginHost;
  Plugin() = default;
  std::unique_ptr<boost::dll::shared_library> lib_;
  sy_plugin_info info_{};
  sy_backend_iface backend_table_{};
  sy_scheduler_iface scheduler_table_{};
  sy_router_iface router_table_{};
  std::string name_, version_, description_;
  std::filesystem::path path_;
};

// What `switchyard plugins` lists: every candidate file and whether it loaded.
struct PluginReport {
  std::filesystem::path path;
  bool loaded = false;     // ok: loaded (scan with load) or its note checks out (scan without)
  bool from_note = false;  // the fields below come from the metadata note, nothing was loaded
  bool unknown = false;    // no note and not loaded: nothing is known without running it
  std::string refusal;  // why not, when !loaded
  std::string name, version, description;
  uint32_t kind = 0, abi_version = 0;
  uint64_t capabilities = 0;
};

class PluginHost {
 public:
  explicit PluginHost(std::vector<std::filesystem::path> search_dirs);
  const std::vector<std::filesystem::path>& search_dirs() const { return dirs_; }

  // Loads switchyard_<kind>_<name>.so from the first directory that has it. `name` must be a
  // plugin name (letters, digits, '_', '-'). Throws PluginError naming the file and the reason.
  std::shared_ptr<Plugin> load(sy_plugin_kind kind, const std::string& name) const;
  // Where load() would find the plugin, without loading it; throws the same not-found error.
  std::filesystem::path locate(sy_plugin_kind kind, const std::string& name) const;
  std::shared_ptr<Plugin> load_file(const std::filesystem::path& path,
                                    uint32_t expected_kind = 0) const;
  // Every candidate file of the search directories: from its metadata note only, or, with
  // `load`, by loading it (which runs its code).
  std::vector<PluginReport> scan(bool load = false) const;

  // The file name a plugin of this kind and name has: "switchyard_backend_cpu_ref.so".
  static std::string file_name(sy_plugin_kind kind, const std::string& name);
  // <directory of the running executable>/plugins, then $SWITCHYARD_PLUGIN_PATH entries.
  static std::vector<std::filesystem::path> default_dirs();
  // Where a config's plugins are looked up: its plugin_dirs (when it names none, the
  // installation's <executable dir>/plugins), then $SWITCHYARD_PLUGIN_PATH. Nothing else.
  static std::vector<std::filesystem::path> search_path(
      const std::vector<std::filesystem::path>& plugin_dirs);
  // Letters, digits, '_' and '-', at most 63 characters.
  static bool is_plugin_name(const std::string& name);

 private:
  std::vector<std::filesystem::path> dirs_;
};

}  // namespace sy
