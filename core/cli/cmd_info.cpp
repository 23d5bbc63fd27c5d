// switchyard info: a GGUF file's metadata and tensor table.
#include <cstdio>
#include <map>
#include <sstream>

#include "cli/commands.h"
#include "cli/options.h"
#include "gguf/gguf.h"
#include "switchyard/common/dtype.h"
#include "switchyard/common/file_type.h"

namespace sy::cli {
namespace {

std::string show(const gguf::Value& v) {
  using gguf::ValueType;
  std::ostringstream os;
  switch (v.type) {
    case ValueType::STRING: os << '"' << v.s << '"'; break;
    case ValueType::BOOL: os << (v.u ? "true" : "false"); break;
    case ValueType::FLOAT32: case ValueType::FLOAT64: os << v.f; break;
    case ValueType::INT8: case ValueType::INT16: case ValueType::INT32: case ValueType::INT64: os << v.i; break;
    case ValueType::ARRAY: {
      os << "[" << gguf::value_type_name(v.array_type) << " x " << v.array.size() << "]";
      if (!v.array.empty()) {
        os << " {";
        for (size_t i = 0; i < v.array.size() && i < 4; ++i) os << (i ? ", " : "") << show(v.array[i]);
        os << (v.array.size() > 4 ? ", ...}" : "}");
      }
      break;
    }
    default: os << v.u;
  }
  return os.str();
}

}  // namespace

int cmd_info(int argc, char** argv) {
  Command app("info", "Prints a GGUF file's metadata and tensors.");
  std::string path;
  app.add_option("file", path, "the GGUF file");
  if (!parse(app, argc, argv)) return 0;
  if (path.empty()) throw UsageError("expected one GGUF file");
  auto f = gguf::File::open(path);
  std::printf("%s: GGUF v%u, alignment %u, %zu metadata keys, %zu tensors\n", path.c_str(),
              f->version(), f->alignment(), f->metadata().size(), f->tensors().size());
  for (const auto& [k, v] : f->metadata()) {
    std::string shown = show(v);
    if (k == "general.file_type" && dtype::file_type_by_id((uint32_t)v.u))
      shown += std::string(" (") + dtype::file_type_by_id((uint32_t)v.u)->name + ")";
    std::printf("  %-44s %s\n", k.c_str(), shown.c_str());
  }
  uint64_t bytes = 0, params = 0;
  std::map<uint32_t, int> per_type;  // tensors of each type, in type-id order
  for (const auto& t : f->tensors()) {
    std::string dims;
    for (uint32_t d = 0; d < t.n_dims; ++d) dims += (d ? ", " : "") + std::to_string(t.ne[d]);
    std::printf("  %-32s %-6s {%s}\n", t.name.c_str(), dtype::name(t.type), dims.c_str());
    bytes += t.nbytes;
    params += t.n_elements();
    ++per_type[t.type];
  }
  std::string types;
  for (const auto& [t, n] : per_type)
    types += (types.empty() ? "" : ", ") + std::string(dtype::name(t)) + " x" + std::to_string(n);
  std::printf("types: %s\n", types.c_str());
  std::printf("total: %.2fM parameters, %.2f MiB of tensor data\n", params / 1e6, bytes / 1048576.0);
  return 0;
}

}  // namespace sy::cli
