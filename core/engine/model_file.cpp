#include "engine/model_file.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>
#include <stdexcept>

#include "host/log.h"
#include "switchyard/common/error.h"

namespace sy::engine {
namespace fs = std::filesystem;

namespace {

// True when `p` lies strictly inside `root` (both absolute and normalised).
bool inside(const fs::path& root, const fs::path& p) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q) {
    if (r->empty()) continue;  // a trailing separator
    if (q == p.end() || *r != *q) return false;
  }
  return q != p.end();
}

ModelFileMaker& model_file_maker() {
  static ModelFileMaker maker;
  return maker;
}

bool process_alive(long pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

void set_model_file_maker(ModelFileMaker maker) {
  model_file_maker() = std::move(maker);
}

size_t remove_stale_generation_files(const fs::path& dir) {
  static const std::regex stale(R"(^.+\.gguf(?:\.partial\.(\d+))?(?:\.tmp\.(\d+)\.\d+)?$)");
  size_t removed = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!std::regex_match(name, m, stale) || !(m[1].matched || m[2].matched) ||
        !e.is_regular_file(ec))
      continue;
    const long pid = std::stol(m[2].matched ? m[2].str() : m[1].str());
    if (pid == ::getpid() || process_alive(pid)) continue;  // still being written
    if (fs::remove(e.path(), ec)) {
      ++removed;
      logger()->info("removed {}, left by an interrupted model generation (process {})",
                     e.path().string(), pid);
    }
  }
  return removed;
}

void ensure_model_file(const ModelConfig& m, const fs::path& models_dir,
                       const std::string& config_origin) {
  if (m.generate.empty()) return;
  const std::string origin = config_origin.empty() ? "config" : config_origin;
  const fs::path root = fs::absolute(models_dir.empty() ? "models" : models_dir).lexically_normal();
  const fs::path target = fs::absolute(m.path).lexically_normal();
  const bool ours = inside(root, target);
  if (ours) remove_stale_generation_files(target.parent_path());
  if (fs::exists(fs::symlink_status(target))) return;  // only a missing file is generated
  // Symbolic links inside the models directory must not lead out of it either.
  if (!ours || !inside(fs::weakly_canonical(root), fs::weakly_canonical(target)))
    throw sy::Error(origin + ": model.generate: " + m.path + " is outside the models directory " +
                    root.string() + "; generate writes only there (set models_dir to change it)");
  if (!model_file_maker())
    throw sy::Error(origin + ": model.generate: " + m.path +
                    " is missing and this program cannot write models (no model "
                    "generator registered)");
  fs::create_directories(target.parent_path());
  // Written under a private name, then linked into place: link() never replaces a file that
  // appeared meanwhile (another process generating the same model).
  const fs::path partial = target.string() + ".partial." + std::to_string(::getpid());
  model_file_maker()(m, partial);
  if (::link(partial.c_str(), target.c_str()) != 0 && errno != EEXIST) {
    const int e = errno;
    fs::remove(partial);
    throw sy::Error(SY_ERR_UNAVAILABLE,
                    origin + ": model.generate: cannot create " + m.path + ": " + std::strerror(e));
  }
  fs::remove(partial);
}

}  // namespace sy::engine
