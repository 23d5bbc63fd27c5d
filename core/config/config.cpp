#include "config/config.h"

#include <toml++/toml.h>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <utility>

#include "config/toml_reader.h"
#include "switchyard/common/file_type.h"
#include "text/chat_template.h"

namespace sy {
namespace {

// A string key that must be one of `allowed`; absent leaves `out` as it is.
void read_one_of(TableReader& r, const toml::table& t, const char* key,
                 std::initializer_list<const char*> allowed, std::string& out) {
  r.read_string(key, out);
  const toml::node* n = t.get(key);
  if (!n) return;
  std::string list;
  for (const char* a : allowed) {
    if (out == a) return;
    list += std::string(list.empty() ? "" : ", ") + "\"" + a + "\"";
  }
  r.fail(*n, key, "must be one of " + list + ", got '" + out + "'");
}

// [scheduler] isolation = "in_process" | "process".
void read_isolation(TableReader& r, const toml::table& t, Isolation& out) {
  std::string v = "in_process";
  read_one_of(r, t, "isolation", {"in_process", "process"}, v);
  out = v == "process" ? Isolation::process : Isolation::in_process;
}

// [triage] plugin, force_full, light_experts and [triage.params]. A plugin is needed unless
// the switch forces every request onto the full path.
void read_triage(const std::string& origin, const toml::table& t, TriageConfig& out) {
  out.enabled = true;
  TableReader r(origin, t, "triage.");
  r.read_string("plugin", out.plugin);
  r.read_bool("force_full", out.force_full);
  r.read_int("light_experts", out.light_experts, 1, 1 << 16);
  if (const toml::node* n = t.get("light_experts"))
    out.light_experts_at = where(origin, n->source());
  r.mark("params");
  r.reject_unknown();
  if (out.plugin.empty() && !out.force_full)
    throw ConfigError(where(origin, t.source()) +
                      ": triage.plugin: required key is missing (or set force_full = true)");
  if (const toml::node* n = t.get("params")) {
    if (!n->is_table())
      throw ConfigError(where(origin, n->source()) + ": triage.params: expected a table, got " +
                        TableReader::type_name(*n));
    TableReader p(origin, *n->as_table(), "triage.params.");
    p.rest_as_params(out.params);
  }
}

}  // namespace

Config parse_config(const std::string& text, const std::string& origin) {
  return parse_config(parse_toml(text, origin), origin);
}

Config parse_config(const toml::table& root, const std::string& origin) {
  Config c;
  c.origin = origin;
  TableReader top(origin, root, "");
  top.read_string("log_level", c.log_level);
  top.read_string_array("plugin_dirs", c.plugin_dirs);
  std::string models_dir;
  top.read_string("models_dir", models_dir);
  c.models_dir = models_dir;
  for (const char* t : {"model", "backend", "scheduler", "engine", "sampling", "triage"})
    top.mark(t);
  top.reject_unknown();
  if (auto* t = table_at(origin, root, "model")) {
    TableReader r(origin, *t, "model.");
    r.read_string("path", c.model.path, true);
    r.read_string("chat_template", c.model.chat_template);
    if (!c.model.chat_template.empty() && !text::chat_format_by_name(c.model.chat_template)) {
      std::string names;
      for (const auto& n : text::chat_format_names()) names += (names.empty() ? "" : ", ") + n;
      r.fail(
          *t->get("chat_template"), "chat_template",
          "unknown chat template '" + c.model.chat_template + "' (expected one of: " + names + ")");
    }
    r.read_string("chat_template_file", c.model.chat_template_file);
    if (!c.model.chat_template_file.empty()) {
      const toml::node& n = *t->get("chat_template_file");
      if (!c.model.chat_template.empty())
        r.fail(n, "chat_template_file", "set chat_template or chat_template_file, not both");
      std::ifstream in(c.model.chat_template_file, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      if (!in || text.str().empty())
        r.fail(n, "chat_template_file",
               "cannot read a template from '" + c.model.chat_template_file + "'");
      c.model.chat_template_text = text.str();
    }
    r.read_string("generate", c.model.generate);
    r.read_int("seed", c.model.seed, 0, INT64_MAX);
    r.read_string("dtype", c.model.dtype);
    if (!dtype::find_file_type(c.model.dtype))
      r.fail(*t->get("dtype"), "dtype",
             "must be one of " + dtype::file_type_names() + ", got '" + c.model.dtype + "'");
    r.read_bool("pure", c.model.pure);
    r.reject_unknown();
  } else {
    throw ConfigError(origin + ":1:1: model: required table [model] is missing");
  }
  for (auto [key, choice] :
       {std::pair{"backend", &c.backend}, std::pair{"scheduler", &c.scheduler}}) {
    const toml::table* t = table_at(origin, root, key);
    if (!t)
      throw ConfigError(origin + ":1:1: " + key + ": required table [" + key + "] is missing");
    TableReader r(origin, *t, std::string(key) + ".");
    r.read_string("plugin", choice->plugin, true);
    if (choice == &c.scheduler) read_isolation(r, *t, choice->isolation);
    if (choice == &c.backend) {
      r.read_string("fallback", choice->fallback);
      r.read_bool("require_device", choice->require_device);
    }
    r.rest_as_params(choice->params);
  }
  if (auto* t = table_at(origin, root, "engine")) {
    TableReader r(origin, *t, "engine.");
    r.read_int("kv_block_size", c.engine.kv_block_size, 1, 4096);
    r.read_int("kv_blocks", c.engine.kv_blocks, 0, 1 << 24);
    r.read_int("max_seqs", c.engine.max_seqs, 1, 65536);
    r.read_int("max_batch_tokens", c.engine.max_batch_tokens, 1, 1 << 20);
    r.read_int("max_context", c.engine.max_context, 0, 1 << 24);
    r.read_bool("prefix_caching", c.engine.prefix_caching);
    r.read_bool("overlap", c.engine.overlap);
    read_one_of(r, *t, "state_cache", {"all", "last", "none"}, c.engine.state_cache);
    r.read_int("state_cache_slots", c.engine.state_cache_slots, 0, 1 << 20);
    r.read_int("state_cache_mib", c.engine.state_cache_mib, 0, 1 << 24);
    // "f16": half the KV memory and bandwidth; "f32" stays the exact default.
    std::string kv = "f32";
    read_one_of(r, *t, "kv_dtype", {"f32", "f16"}, kv);
    read_one_of(r, *t, "swa_cache", {"window", "full"}, c.engine.swa_cache);
    c.engine.kv_dtype = kv == "f16" ? SY_DTYPE_F16 : SY_DTYPE_F32;
    r.reject_unknown();
  }
  if (auto* t = table_at(origin, root, "sampling")) {
    TableReader r(origin, *t, "sampling.");
    r.read_float("temperature", c.sampling.temperature, 0.0, 100.0);
    r.read_int("top_k", c.sampling.top_k, 0, 1 << 24);
    r.read_float("top_p", c.sampling.top_p, 0.0, 1.0);
    r.read_int("seed", c.sampling.seed, 0, INT64_MAX);
    r.read_int("max_tokens", c.sampling.max_tokens, 1, 1 << 20);
    r.reject_unknown();
  }
  if (auto* t = table_at(origin, root, "triage")) read_triage(origin, *t, c.triage);
  return c;
}

toml::table parse_toml(const std::string& text, const std::string& origin) {
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    throw ConfigError(where(origin, e.source()) +
                      ": syntax error: " + std::string(e.description()));
  }
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path.string() + ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Config load_config(const std::filesystem::path& path) {
  return parse_config(read_text_file(path), path.string());
}

}  // namespace sy
