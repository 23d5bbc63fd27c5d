#include "cpu_device_info.h"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

namespace sy::plugin {
namespace {

// Value of the first "key : value" line of /proc/cpuinfo, or "" when absent.
std::string cpuinfo_field(const char* key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon);
    while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.pop_back();
    if (k != key) continue;
    const auto start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

void copy_text(char* dst, size_t cap, const std::string& s) {
  std::strncpy(dst, s.c_str(), cap - 1);
  dst[cap - 1] = '\0';
}

}  // namespace

sy_device_info cpu_device_info(uint64_t weight_dtypes, uint64_t kv_dtypes) {
  sy_device_info d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.kind = SY_DEVICE_CPU;
  d.available = 1;
  std::string model = cpuinfo_field("model name");
  copy_text(d.name, sizeof d.name, model.empty() ? "CPU" : model);
  const std::string vendor_id = cpuinfo_field("vendor_id");
  const std::string vendor = vendor_id == "AuthenticAMD"   ? "AMD"
                             : vendor_id == "GenuineIntel" ? "Intel"
                             : vendor_id.empty()           ? "unknown"
                                                           : vendor_id;
  copy_text(d.vendor, sizeof d.vendor, vendor);
  const long page = sysconf(_SC_PAGESIZE);
  const long phys = sysconf(_SC_PHYS_PAGES);
  const long avail = sysconf(_SC_AVPHYS_PAGES);
  d.memory_total = page > 0 && phys > 0 ? (uint64_t)page * (uint64_t)phys : 0;
  d.memory_free = page > 0 && avail > 0 ? (uint64_t)page * (uint64_t)avail : 0;
  d.weight_dtypes = weight_dtypes;
  d.kv_dtypes = kv_dtypes;
  return d;
}

}  // namespace sy::plugin
