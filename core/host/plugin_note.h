// Reads a plugin's metadata note (SY_PLUGIN_NOTE, abi/switchyard/abi/plugin.h) by parsing the
// ELF file: nothing of it is loaded or run. Every offset and size is checked against the file,
// so a truncated or hostile file is refused, not trusted (fuzzed in tests/fuzz).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace sy {

struct PluginNote {
  uint32_t kind = 0, abi_version = 0;
  uint64_t capabilities = 0;
  std::string name, version, description;
};

enum class NoteStatus {
  found,
  absent,   // a valid ELF shared object without the note (built with an SDK before 1.3)
  invalid,  // not an ELF file, or a malformed one; `why` says what (never its bytes)
};

NoteStatus parse_plugin_note(const uint8_t* data, size_t size, PluginNote& out, std::string& why);
// The same on a file (mapped read-only).
NoteStatus read_plugin_note(const std::filesystem::path& path, PluginNote& out, std::string& why);

}  // namespace sy
