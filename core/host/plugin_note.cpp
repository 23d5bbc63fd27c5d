#include "host/plugin_note.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "switchyard/abi/plugin.h"

namespace sy {
namespace {

template <typename T>
bool read_at(const uint8_t* data, size_t size, uint64_t off, T& out) {
  if (off > size || sizeof(T) > size - off) return false;
  std::memcpy(&out, data + off, sizeof(T));
  return true;
}

// A fixed-size field as a string: up to its first NUL, which must be there.
bool field(const char* f, size_t n, std::string& out) {
  const void* nul = std::memchr(f, 0, n);
  if (!nul) return false;
  out.assign(f, static_cast<const char*>(nul));
  return true;
}

// Notes in [off, off + len): returns found when one is ours and well formed.
NoteStatus scan_notes(const uint8_t* data, size_t size, uint64_t off, uint64_t len, PluginNote& out,
                      std::string& why) {
  if (off > size || len > size - off) {
    why = "a note section lies outside the file";
    return NoteStatus::invalid;
  }
  const uint64_t end = off + len;
  while (end - off >= 12) {
    uint32_t namesz = 0, descsz = 0, type = 0;
    read_at(data, size, off, namesz);
    read_at(data, size, off + 4, descsz);
    read_at(data, size, off + 8, type);
    const uint64_t name_off = off + 12;
    const uint64_t desc_off = name_off + ((uint64_t(namesz) + 3) & ~uint64_t(3));
    const uint64_t next = desc_off + ((uint64_t(descsz) + 3) & ~uint64_t(3));
    if (desc_off > end || next > end) {
      why = "a note runs past its section";
      return NoteStatus::invalid;
    }
    if (namesz == sizeof(SY_NOTE_OWNER) && type == SY_NOTE_PLUGIN &&
        std::memcmp(data + name_off, SY_NOTE_OWNER, sizeof(SY_NOTE_OWNER)) == 0) {
      sy_plugin_note n;
      if (descsz != sizeof(n) - 24) {
        why = "its Switchyard note has size " + std::to_string(descsz) + ", expected " +
              std::to_string(sizeof(n) - 24);
        return NoteStatus::invalid;
      }
      std::memcpy(reinterpret_cast<char*>(&n) + 24, data + desc_off, sizeof(n) - 24);
      if (n.format != SY_NOTE_FORMAT) {
        why = "its Switchyard note has format " + std::to_string(n.format) + ", expected " +
              std::to_string(SY_NOTE_FORMAT);
        return NoteStatus::invalid;
      }
      if (!field(n.name, sizeof n.name, out.name) ||
          !field(n.version, sizeof n.version, out.version) ||
          !field(n.description, sizeof n.description, out.description)) {
        why = "its Switchyard note has an unterminated string";
        return NoteStatus::invalid;
      }
      out.kind = n.kind;
      out.abi_version = n.abi_version;
      out.capabilities = uint64_t(n.capabilities_lo) | (uint64_t(n.capabilities_hi) << 32);
      return NoteStatus::found;
    }
    off = next;
  }
  return NoteStatus::absent;
}

}  // namespace

NoteStatus parse_plugin_note(const uint8_t* data, size_t size, PluginNote& out, std::string& why) {
  Elf64_Ehdr eh;
  if (!read_at(data, size, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    why = "not an ELF file";
    return NoteStatus::invalid;
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    why = "not a 64-bit little-endian ELF file";
    return NoteStatus::invalid;
  }
  if (eh.e_type != ET_DYN) {
    why = "not an ELF shared object";
    return NoteStatus::invalid;
  }
  if (eh.e_shnum == 0) return NoteStatus::absent;  // no section table: nothing to find
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) {
    why = "its section headers have an unexpected size";
    return NoteStatus::invalid;
  }
  for (uint32_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    if (!read_at(data, size, eh.e_shoff + uint64_t(i) * sizeof(Elf64_Shdr), sh)) {
      why = "its section table lies outside the file";
      return NoteStatus::invalid;
    }
    if (sh.sh_type != SHT_NOTE) continue;
    const NoteStatus st = scan_notes(data, size, sh.sh_offset, sh.sh_size, out, why);
    if (st != NoteStatus::absent) return st;
  }
  return NoteStatus::absent;
}

NoteStatus read_plugin_note(const std::filesystem::path& path, PluginNote& out, std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why = std::string("cannot open: ") + std::strerror(errno);
    return NoteStatus::invalid;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
    ::close(fd);
    why = "not a regular, non-empty file";
    return NoteStatus::invalid;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) {
    why = std::string("cannot map: ") + std::strerror(errno);
    return NoteStatus::invalid;
  }
  const NoteStatus s = parse_plugin_note(static_cast<const uint8_t*>(map), size, out, why);
  ::munmap(map, size);
  return s;
}

}  // namespace sy
