// [[variants]] tables: each entry holds a unique `name` and the tables of a single-variant
// config (model, backend, scheduler, engine, sampling), read by parse_config, so errors still
// name file:line:column: key. The serving config and the benchmark's compare file use it.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "config/toml_reader.h"

namespace sy {

struct VariantTable {
  std::string name;
  Config config;
  std::string where;  // origin:line:col of the entry, for messages
};

// The top-level keys every [[variants]] file takes besides its own tables: log_level (into
// `log_level`), plugin_dirs (searched before each entry's own) and models_dir (each entry's
// default), read from `top`; the caller marks its own tables and calls reject_unknown.
struct VariantFileKeys {
  std::vector<std::filesystem::path> plugin_dirs;
  std::string models_dir;
};
VariantFileKeys read_variant_file_keys(TableReader& top, std::string& log_level);

// Reads root["variants"]. `own` names keys the caller reads itself from each entry (such as a
// traffic weight); read_own(reader, entry, index) reads them before the rest goes to
// parse_config, and returns true when it has read the whole entry (one that needs no config
// tables, such as the benchmark's remote endpoint; its `config` stays default). The entries are
// edited in place (their own keys are erased), since copying a TOML++ node drops its source
// position. `plugin_dirs` are searched before each entry's own. Throws ConfigError.
std::vector<VariantTable> parse_variant_tables(
    toml::table& root, const std::string& origin,
    const std::vector<std::filesystem::path>& plugin_dirs, const std::vector<std::string>& own = {},
    const std::function<bool(TableReader&, const toml::table&, size_t)>& read_own = {});

}  // namespace sy
