// libFuzzer: any bytes through the plugin metadata-note reader (it parses ELF files the host has
// not loaded). Found notes must hold terminated, bounded strings.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "host/plugin_note.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sy::PluginNote n;
  std::string why;
  const sy::NoteStatus s = sy::parse_plugin_note(data, size, n, why);
  if (s == sy::NoteStatus::invalid && why.empty()) std::abort();
  if (s == sy::NoteStatus::found &&
      (n.name.size() >= 64 || n.version.size() >= 32 || n.description.size() >= 128))
    std::abort();
  return 0;
}
