// A small command-line parser: `--key value`, `--key=value` and boolean `--flag`, with errors
// that name the flag.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace sy::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  // `flags` are the options that take no value.
  Args(int argc, char** argv, int first, std::set<std::string> known, std::set<std::string> flags = {});
  bool has(const std::string& key) const { return values_.count(key) > 0; }
  std::string str(const std::string& key, const std::string& def = "") const;
  int64_t integer(const std::string& key, int64_t def) const;
  double number(const std::string& key, double def) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

}  // namespace sy::cli
