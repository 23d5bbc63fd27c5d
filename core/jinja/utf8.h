// UTF-8 helpers: Python indexes, slices and measures strings in code points, not bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sy::jinja {

void append_utf8(std::string& out, uint32_t cp);
// The byte offset where each code point starts, and the size as the last entry. Bytes that are
// not UTF-8 count one each.
std::vector<size_t> code_point_offsets(std::string_view s);
size_t code_point_count(std::string_view s);

}  // namespace sy::jinja
