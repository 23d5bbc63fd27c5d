#include "cli/args.h"

namespace sy::cli {

Args::Args(int argc, char** argv, int first, std::set<std::string> known, std::set<std::string> flags) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) {
      positional_.push_back(a);
      continue;
    }
    std::string key = a.substr(2), value;
    const auto eq = key.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    }
    if (!known.count(key) && !flags.count(key)) throw UsageError("unknown option --" + key);
    if (flags.count(key)) {
      values_[key] = inline_value ? value : "true";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) throw UsageError("option --" + key + " needs a value");
      value = argv[++i];
    }
    values_[key] = value;
  }
}

std::string Args::str(const std::string& key, const std::string& def) const {
  auto it = values_.find(key);
  return it == values_.end() ? def : it->second;
}

int64_t Args::integer(const std::string& key, int64_t def) const {
  auto it = values_.find(key);
  if (it == values_.end()) return def;
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(it->second, &used);
  } catch (...) {
    used = 0;
  }
  if (used != it->second.size() || it->second.empty())
    throw UsageError("option --" + key + " expects an integer, got '" + it->second + "'");
  return v;
}

double Args::number(const std::string& key, double def) const {
  auto it = values_.find(key);
  if (it == values_.end()) return def;
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(it->second, &used);
  } catch (...) {
    used = 0;
  }
  if (used != it->second.size() || it->second.empty())
    throw UsageError("option --" + key + " expects a number, got '" + it->second + "'");
  return v;
}

}  // namespace sy::cli
