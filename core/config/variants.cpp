#include "config/variants.h"

#include <set>

namespace sy {

VariantFileKeys read_variant_file_keys(TableReader& top, std::string& log_level) {
  VariantFileKeys k;
  top.read_string("log_level", log_level);
  top.read_string_array("plugin_dirs", k.plugin_dirs);
  top.read_string("models_dir", k.models_dir);
  return k;
}

std::vector<VariantTable> parse_variant_tables(
    toml::table& root, const std::string& origin,
    const std::vector<std::filesystem::path>& plugin_dirs, const std::vector<std::string>& own,
    const std::function<bool(TableReader&, const toml::table&, size_t)>& read_own) {
  toml::node* vn = root.get("variants");
  if (!vn) throw ConfigError(origin + ":1:1: variants: no [[variants]] tables");
  toml::array* arr = vn->as_array();
  if (!arr || arr->empty() || !arr->is_array_of_tables())
    throw ConfigError(where(origin, vn->source()) + ": variants: expected [[variants]] tables");
  std::vector<VariantTable> out;
  std::set<std::string> names;
  for (auto& e : *arr) {
    toml::table& vt = *e.as_table();
    VariantTable v;
    v.where = where(origin, vt.source());
    TableReader r(origin, vt, "variants.");
    r.read_string("name", v.name, true);
    if (!names.insert(v.name).second)
      r.fail(*vt.get("name"), "name", "'" + v.name + "' is used twice");
    if (read_own && read_own(r, vt, out.size())) {
      out.push_back(std::move(v));
      continue;
    }
    for (const char* t : {"model", "backend", "scheduler"})
      if (!vt.get(t))
        throw ConfigError(v.where + ": variants." + t + ": variant '" + v.name +
                          "' has no [variants." + t + "] table");
    vt.erase("name");
    for (const auto& k : own) vt.erase(k);
    v.config = parse_config(vt, origin);
    v.config.plugin_dirs.insert(v.config.plugin_dirs.begin(), plugin_dirs.begin(),
                                plugin_dirs.end());
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace sy
