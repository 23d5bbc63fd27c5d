#include "switchyard/common/file_type.h"

#include <cctype>

namespace sy::dtype {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = (char)std::tolower((unsigned char)c);
  return out;
}

}  // namespace

const FileType* find_file_type(std::string_view name) {
  std::string want = lower(name);
  if (want == "mxfp4") want = "mxfp4_moe";  // llama.cpp's only MXFP4 file type
  for (const FileType& f : kFileTypes)
    if (lower(f.name) == want) return &f;
  return nullptr;
}

const FileType* file_type_by_id(uint32_t id) {
  for (const FileType& f : kFileTypes)
    if (f.id == id) return &f;
  return nullptr;
}

std::string file_type_names() {
  std::string out;
  for (const FileType& f : kFileTypes) out += (out.empty() ? "" : ", ") + lower(f.name);
  return out;
}

}  // namespace sy::dtype
