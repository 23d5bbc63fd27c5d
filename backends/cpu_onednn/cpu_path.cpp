#include "cpu_path.h"

#include <cstring>

namespace sy::cpu_onednn {
namespace {

struct PathInfo {
  CpuPath path;
  const char* name;
};
constexpr PathInfo kPaths[] = {{CpuPath::scalar, "scalar"},
                               {CpuPath::avx2, "avx2"},
                               {CpuPath::avx512, "avx512"},
                               {CpuPath::avx512_vnni, "avx512_vnni"},
                               {CpuPath::avx_vnni, "avx_vnni"}};

// The first feature of path p this CPU lacks, or nullptr when it has them all.
const char* missing_feature(CpuPath p) {
  __builtin_cpu_init();
  if (p == CpuPath::scalar) return nullptr;
  if (!__builtin_cpu_supports("avx2")) return "avx2";
  if (!__builtin_cpu_supports("fma")) return "fma";
  if (!__builtin_cpu_supports("f16c")) return "f16c";
  if (p == CpuPath::avx2) return nullptr;
  if (p == CpuPath::avx_vnni) return __builtin_cpu_supports("avxvnni") ? nullptr : "avx_vnni";
  if (!__builtin_cpu_supports("avx512f")) return "avx512f";
  if (!__builtin_cpu_supports("avx512bw")) return "avx512bw";
  if (!__builtin_cpu_supports("avx512vl")) return "avx512vl";
  if (p == CpuPath::avx512) return nullptr;
  return __builtin_cpu_supports("avx512vnni") ? nullptr : "avx512_vnni";
}

}  // namespace

const char* path_name(CpuPath p) {
  for (const PathInfo& i : kPaths)
    if (i.path == p) return i.name;
  return "unknown";
}

bool cpu_supports(CpuPath p) {
  return missing_feature(p) == nullptr;
}

CpuPath best_path() {
  for (CpuPath p : {CpuPath::avx512_vnni, CpuPath::avx512, CpuPath::avx_vnni, CpuPath::avx2})
    if (cpu_supports(p)) return p;
  return CpuPath::scalar;
}

bool choose_path(const char* forced, CpuPath* out, std::string* error) {
  if (!forced || !*forced) {
    *out = best_path();
    return true;
  }
  for (const PathInfo& i : kPaths) {
    if (std::strcmp(forced, i.name) != 0) continue;
    if (const char* missing = missing_feature(i.path)) {
      *error = std::string(kCpuPathEnv) + "=" + forced + ": this CPU lacks " + missing;
      return false;
    }
    *out = i.path;
    return true;
  }
  std::string names;
  for (const PathInfo& i : kPaths) names += std::string(names.empty() ? "" : ", ") + i.name;
  *error = std::string(kCpuPathEnv) + "=" + forced + ": unknown path (known: " + names + ")";
  return false;
}

}  // namespace sy::cpu_onednn
