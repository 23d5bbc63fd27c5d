#include "host/plugin_host.h"

#include <sys/stat.h>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "host/abi_table.h"
#include "host/host_api.h"
#include "host/log.h"
#include "host/plugin_note.h"

namespace sy {
namespace fs = std::filesystem;

const char* plugin_kind_name(uint32_t kind) {
  switch (kind) {
    case SY_PLUGIN_BACKEND:
      return "backend";
    case SY_PLUGIN_SCHEDULER:
      return "scheduler";
    case SY_PLUGIN_ROUTER:
      return "router";
    default:
      return "unknown";
  }
}

std::string version_string(uint32_t packed) {
  return std::to_string(SY_VERSION_MAJOR(packed)) + "." + std::to_string(SY_VERSION_MINOR(packed));
}

namespace {

// dlopen maps a library once per process, so the plugin's entry and shutdown must run once per
// mapping too: a load of a file that is already loaded shares the live Plugin. Several Variants
// (each with its own PluginHost) on one backend then share one handshake, and unloading one of
// them cannot shut the plugin down under the others. Never destroyed: Plugins may outlive statics.
struct LoadedPlugins {
  // Held across a whole load and a whole unload; recursive because a refused load destroys its
  // half-made Plugin while holding it.
  std::recursive_mutex mu;
  std::map<fs::path, std::weak_ptr<Plugin>> by_path;
};
LoadedPlugins& loaded_plugins() {
  static LoadedPlugins* registry = new LoadedPlugins;
  return *registry;
}

}  // namespace

Plugin::~Plugin() {
  std::lock_guard<std::recursive_mutex> lock(loaded_plugins().mu);
  // The plugin joins its threads in shutdown; only then may its code be unmapped.
  if (info_.shutdown) info_.shutdown();
  lib_.reset();
}

const sy_backend_iface* Plugin::backend_iface() const {
  return info_.kind == SY_PLUGIN_BACKEND ? &backend_table_ : nullptr;
}
const sy_scheduler_iface* Plugin::scheduler_iface() const {
  return info_.kind == SY_PLUGIN_SCHEDULER ? &scheduler_table_ : nullptr;
}
const sy_router_iface* Plugin::router_iface() const {
  return info_.kind == SY_PLUGIN_ROUTER ? &router_table_ : nullptr;
}

PluginHost::PluginHost(std::vector<fs::path> search_dirs) : dirs_(std::move(search_dirs)) {}

std::string PluginHost::file_name(sy_plugin_kind kind, const std::string& name) {
  return std::string("switchyard_") + plugin_kind_name(kind) + "_" + name + ".so";
}

namespace {

std::vector<fs::path> env_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("SWITCHYARD_PLUGIN_PATH")) {
    std::stringstream ss(env);
    for (std::string item; std::getline(ss, item, ':');)
      if (!item.empty()) dirs.emplace_back(item);
  }
  return dirs;
}

fs::path installation_dir() {
  return boost::dll::program_location().parent_path() / "plugins";
}

// Anyone who can write where plugins are found can run code in this process: say so, once
// per path.
void warn_if_writable_by_others(const fs::path& p, const char* what) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0 || !(st.st_mode & S_IWOTH)) return;
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lk(mu);
  if (!warned.insert(p.string()).second) return;
  logger()->warn(
      "{} {} is writable by every user: anyone on this machine can place code there "
      "that this process will load and run",
      what, p.string());
}

}  // namespace

std::vector<fs::path> PluginHost::default_dirs() {
  std::vector<fs::path> dirs = env_dirs();
  dirs.push_back(installation_dir());
  return dirs;
}

std::vector<fs::path> PluginHost::search_path(const std::vector<fs::path>& plugin_dirs) {
  std::vector<fs::path> dirs = plugin_dirs;
  if (dirs.empty()) dirs.push_back(installation_dir());
  for (auto& d : env_dirs()) dirs.push_back(std::move(d));
  return dirs;
}

bool PluginHost::is_plugin_name(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return false;
  return true;
}

namespace {

std::string cstr(const char* s) {
  return s ? s : "";
}

}  // namespace

std::shared_ptr<Plugin> PluginHost::load_file(const fs::path& path, uint32_t expected_kind) const {
  auto fail = [&](const std::string& why) -> PluginError {
    return PluginError("plugin " + path.string() + ": " + why);
  };
  if (!fs::exists(path)) throw fail("no such file");
  std::error_code ec;
  fs::path key = fs::weakly_canonical(path, ec);
  if (ec) key = fs::absolute(path);
  LoadedPlugins& registry = loaded_plugins();
  std::lock_guard<std::recursive_mutex> lock(registry.mu);
  if (auto it = registry.by_path.find(key); it != registry.by_path.end()) {
    if (std::shared_ptr<Plugin> live = it->second.lock()) {
      if (expected_kind && live->kind() != expected_kind)
        throw fail(std::string("is a ") + plugin_kind_name(live->kind()) + " plugin, expected a " +
                   plugin_kind_name(expected_kind) + " plugin");
      return live;
    }
  }

  // The note is read from the file: a plugin that says it cannot work here never runs.
  PluginNote note;
  std::string why;
  const NoteStatus ns = read_plugin_note(path, note, why);
  if (ns == NoteStatus::invalid) throw fail(why + " (refused without loading it)");
  if (ns == NoteStatus::found) {
    const uint32_t v = note.abi_version;
    if (SY_VERSION_MAJOR(v) != SY_ABI_VERSION_MAJOR)
      throw fail("ABI major version mismatch: plugin implements " + version_string(v) +
                 ", host implements " + version_string(SY_ABI_VERSION) +
                 " (from its metadata note; not loaded)");
    if (SY_VERSION_MINOR(v) > SY_ABI_VERSION_MINOR)
      throw fail("plugin implements ABI " + version_string(v) + ", newer than the host's " +
                 version_string(SY_ABI_VERSION) + " (from its metadata note; not loaded)");
    if (expected_kind && note.kind != expected_kind)
      throw fail(std::string("is a ") + plugin_kind_name(note.kind) + " plugin, expected a " +
                 plugin_kind_name(expected_kind) + " plugin");
  }
  warn_if_writable_by_others(path, "plugin file");
  auto lib = std::make_unique<boost::dll::shared_library>();
  try {
    lib->load(path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    throw fail(std::string("cannot be loaded: ") + e.what());
  }
  if (!lib->has(SY_PLUGIN_ENTRY_SYMBOL))
    throw fail("missing entry symbol '" SY_PLUGIN_ENTRY_SYMBOL "'");
  auto entry =
      lib->get<sy_status(uint32_t, const sy_host_api*, sy_plugin_info*)>(SY_PLUGIN_ENTRY_SYMBOL);

  auto plugin = std::shared_ptr<Plugin>(new Plugin());
  char error_buf[1024] = {0};
  sy_plugin_info& info = plugin->info_;
  info.struct_size = sizeof(sy_plugin_info);
  info.error_buf = error_buf;
  info.error_buf_size = sizeof(error_buf);
  sy_status st;
  try {
    st = entry(SY_ABI_VERSION, host_api(), &info);
  } catch (...) {
    // A C entry must not throw; refuse the plugin rather than let it unwind through the host.
    info = {};
    throw fail("entry threw an exception across the C ABI");
  }
  error_buf[sizeof(error_buf) - 1] = 0;
  info.error_buf = nullptr;
  info.error_buf_size = 0;
  if (st != SY_OK) {
    const std::string why = error_buf[0] ? error_buf : "no reason given";
    info.shutdown = nullptr;  // a failed entry owns nothing to shut down
    throw fail("init failed (status " + std::to_string(static_cast<int>(st)) + "): " + why);
  }
  const uint32_t v = info.abi_version;
  if (SY_VERSION_MAJOR(v) != SY_ABI_VERSION_MAJOR) {
    info.shutdown = nullptr;
    throw fail("ABI major version mismatch: plugin implements " + version_string(v) +
               ", host implements " + version_string(SY_ABI_VERSION));
  }
  if (SY_VERSION_MINOR(v) > SY_ABI_VERSION_MINOR) {
    info.shutdown = nullptr;
    throw fail("plugin implements ABI " + version_string(v) + ", newer than the host's " +
               version_string(SY_ABI_VERSION));
  }
  if (info.kind != SY_PLUGIN_BACKEND && info.kind != SY_PLUGIN_SCHEDULER &&
      info.kind != SY_PLUGIN_ROUTER)
    throw fail("unknown plugin kind " + std::to_string(info.kind));
  if (expected_kind && info.kind != expected_kind)
    throw fail(std::string("is a ") + plugin_kind_name(info.kind) + " plugin, expected a " +
               plugin_kind_name(expected_kind) + " plugin");
  if (ns == NoteStatus::found && (note.kind != info.kind || note.name != cstr(info.name)))
    throw fail(std::string("its metadata note (") + plugin_kind_name(note.kind) + " '" +
               note.name.substr(0, 63) + "') disagrees with its entry (" +
               plugin_kind_name(info.kind) + " '" + cstr(info.name).substr(0, 63) + "')");
  // Routers exist since 1.2: one that negotiated an older minor speaks an ABI without them.
  if (info.kind == SY_PLUGIN_ROUTER && SY_VERSION_MINOR(v) < 2)
    throw fail("router plugins need ABI 1.2, the plugin negotiated " + version_string(v));
  if (!info.iface) throw fail("entry returned no function table");
  const uint32_t table_size = table_struct_size(info.iface);
  const uint32_t need = min_table_size(info.kind, SY_VERSION_MINOR(v));
  if (table_size < need)
    throw fail("function table has struct_size " + std::to_string(table_size) + ", ABI " +
               version_string(v) + " needs at least " + std::to_string(need));
  if (info.kind == SY_PLUGIN_SCHEDULER)
    plugin->scheduler_table_ = covered_table<sy_scheduler_iface>(info.iface);
  else if (info.kind == SY_PLUGIN_ROUTER)
    plugin->router_table_ = covered_table<sy_router_iface>(info.iface);
  else
    plugin->backend_table_ = covered_table<sy_backend_iface>(info.iface);
  if (info.kind == SY_PLUGIN_SCHEDULER) {
    auto* s = plugin->scheduler_iface();
    if (!s->create || !s->destroy || !s->plan || !s->last_error)
      throw fail("scheduler table lacks create, destroy, plan or last_error");
  } else if (info.kind == SY_PLUGIN_ROUTER) {
    auto* r = plugin->router_iface();
    if (!r->create || !r->destroy || !r->route || !r->last_error)
      throw fail("router table lacks create, destroy, route or last_error");
  } else {
    auto* b = plugin->backend_iface();
    if (!b->create || !b->destroy || !b->last_error || !b->buffer_alloc || !b->buffer_free)
      throw fail("backend table lacks create, destroy, last_error or buffer functions");
  }
  plugin->name_ = cstr(info.name);
  plugin->version_ = cstr(info.version);
  plugin->description_ = cstr(info.description);
  plugin->path_ = path;
  plugin->lib_ = std::move(lib);
  logger()->info("loaded {} plugin '{}' {} (ABI {}) from {}", plugin_kind_name(info.kind),
                 plugin->name_, plugin->version_, version_string(v), path.string());
  registry.by_path[key] = plugin;
  return plugin;
}

std::shared_ptr<Plugin> PluginHost::load(sy_plugin_kind kind, const std::string& name) const {
  return load_file(locate(kind, name), kind);
}

fs::path PluginHost::locate(sy_plugin_kind kind, const std::string& name) const {
  if (!is_plugin_name(name))
    throw PluginError(std::string(plugin_kind_name(kind)) + " plugin '" + name.substr(0, 80) +
                      "' is not a plugin name: use a name (letters, digits, '_', '-'), looked "
                      "up as " +
                      file_name(kind, "<name>") +
                      " in plugin_dirs and $SWITCHYARD_PLUGIN_PATH, never a path");
  const std::string file = file_name(kind, name);
  for (const auto& dir : dirs_) {
    const fs::path p = dir / file;
    if (fs::exists(p)) {
      warn_if_writable_by_others(dir, "plugin directory");
      return p;
    }
  }
  std::string where;
  for (const auto& d : dirs_) where += (where.empty() ? "" : ", ") + d.string();
  throw PluginError(std::string(plugin_kind_name(kind)) + " plugin '" + name + "' not found: no " +
                    file + " in [" + where + "]");
}

std::vector<PluginReport> PluginHost::scan(bool load) const {
  std::vector<PluginReport> out;
  for (const auto& dir : dirs_) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const auto fname = e.path().filename().string();
      if (fname.rfind("switchyard_", 0) == 0 && e.path().extension() == ".so")
        files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      PluginReport r;
      r.path = f;
      if (!load) {
        PluginNote note;
        std::string why;
        const NoteStatus ns = read_plugin_note(f, note, why);
        if (ns == NoteStatus::absent) {
          r.unknown = true;
          r.refusal = "plugin " + f.string() +
                      ": no metadata note (built with an SDK before 1.3); only loading it "
                      "(--load, which runs its code) can tell more";
        } else if (ns == NoteStatus::invalid) {
          r.refusal = "plugin " + f.string() + ": " + why;
        } else if (SY_VERSION_MAJOR(note.abi_version) != SY_ABI_VERSION_MAJOR ||
                   SY_VERSION_MINOR(note.abi_version) > SY_ABI_VERSION_MINOR) {
          r.refusal = "plugin " + f.string() + ": implements ABI " +
                      version_string(note.abi_version) + ", host implements " +
                      version_string(SY_ABI_VERSION) + " (from its metadata note)";
        } else {
          r.loaded = true;
          r.from_note = true;
          r.name = note.name;
          r.version = note.version;
          r.description = note.description;
          r.kind = note.kind;
          // Negotiated down to the host's minor, as the entry would.
          r.abi_version = SY_MAKE_VERSION(
              SY_ABI_VERSION_MAJOR,
              std::min<uint32_t>(SY_VERSION_MINOR(note.abi_version), SY_ABI_VERSION_MINOR));
          r.capabilities = note.capabilities;
        }
        out.push_back(std::move(r));
        continue;
      }
      try {
        auto p = load_file(f);
        r.loaded = true;
        r.name = p->name();
        r.version = p->version();
        r.description = p->description();
        r.kind = p->kind();
        r.abi_version = p->abi_version();
        r.capabilities = p->capabilities();
      } catch (const PluginError& e) {
        r.refusal = e.what();
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace sy
