#include "server/serve_config.h"

#include <sstream>

#include "config/toml_reader.h"
#include "config/variants.h"

namespace sy::server {
namespace {

ServeOptions read_serve(const std::string& origin, const toml::table& t) {
  ServeOptions o;
  TableReader r(origin, t, "serve.");
  r.read_string("host", o.host);
  r.read_int("port", o.port, 0, 65535);
  r.read_int("max_queue", o.max_queue, 1, 1 << 20);
  auto seconds = [&](const char* key, double& out, double lo = 0.01, double hi = 86400) {
    float f = static_cast<float>(out);
    r.read_float(key, f, lo, hi);
    out = f;
  };
  seconds("request_timeout_s", o.request_timeout_s, 0.001, 86400 * 7);
  r.read_string("model_name", o.model_name);
  if (o.model_name.empty()) r.fail(*t.get("model_name"), "model_name", "must not be empty");
  r.read_string("baseline", o.baseline);
  r.read_string("priority_order", o.priority_order);
  if (o.priority_order != "larger_first" && o.priority_order != "vllm")
    r.fail(*t.get("priority_order"), "priority_order", "must be \"larger_first\" or \"vllm\"");
  r.read_int("http_threads", o.http_threads, 1, 4096);
  r.read_int("watch_ms", o.watch_ms, 0, 3600 * 1000);
  r.read_int("max_connections", o.max_connections, 1, 1 << 20);
  r.read_int("max_body_bytes", o.max_body_bytes, 1, int64_t(1) << 32);
  r.read_int("max_header_bytes", o.max_header_bytes, 256, 1 << 20);
  r.read_int("max_headers", o.max_headers, 1, 10000);
  r.read_int("max_json_depth", o.max_json_depth, 2, 10000);
  r.read_int("max_json_elements", o.max_json_elements, 16, 1 << 26);
  seconds("header_timeout_s", o.header_timeout_s);
  seconds("read_timeout_s", o.read_timeout_s);
  seconds("idle_timeout_s", o.idle_timeout_s);
  seconds("write_timeout_s", o.write_timeout_s);
  r.read_int("max_tokens_limit", o.max_tokens_limit, 0, 1 << 24);
  r.read_int("request_memory_mb", o.request_memory_mb, 1, 1 << 20);
  r.read_bool("gateway_metrics", o.gateway_metrics);
  seconds("drain_timeout_s", o.drain_timeout_s, 0, 3600);
  r.mark("kv_events");
  if (const toml::table* k = table_at(origin, t, "kv_events", "serve."))
    o.kv_events = read_kv_events(origin, *k);
  r.mark("shadow");
  if (const toml::table* s = table_at(origin, t, "shadow", "serve.")) {
    ShadowSpec sh;
    TableReader sr(origin, *s, "serve.shadow.");
    sr.read_string("variant", sh.variant, true);
    float f = 0;
    if (!s->get("fraction"))
      throw ConfigError(where(origin, s->source()) +
                        ": serve.shadow.fraction: required key is missing");
    sr.read_float("fraction", f, 0, 1);
    sh.fraction = f;
    sr.reject_unknown();
    o.shadow = sh;
  }
  r.reject_unknown();
  return o;
}

// The baseline and the shadow must name variants; `at` points at the [serve] table.
void check_names(const ServeConfig& c, const toml::table* serve) {
  auto known = [&](const std::string& n) {
    for (const auto& v : c.variants)
      if (v.name == n) return true;
    return false;
  };
  const std::string at = serve ? where(c.origin, serve->source()) : c.origin + ":1:1";
  if (!c.serve.baseline.empty() && !known(c.serve.baseline)) {
    const toml::node* n = serve ? serve->get("baseline") : nullptr;
    throw ConfigError((n ? where(c.origin, n->source()) : at) +
                      ": serve.baseline: no variant named '" + c.serve.baseline + "'");
  }
  if (c.serve.shadow && !known(c.serve.shadow->variant)) {
    const toml::node* n = serve->get("shadow")->as_table()->get("variant");
    throw ConfigError(where(c.origin, n->source()) + ": serve.shadow.variant: no variant named '" +
                      c.serve.shadow->variant + "'");
  }
}

}  // namespace

ServeConfig parse_serve_config(const std::string& text, const std::string& origin) {
  toml::table root = parse_toml(text, origin);
  ServeConfig c;
  c.origin = origin;
  const toml::table* serve = table_at(origin, root, "serve", "");
  if (serve) c.serve = read_serve(origin, *serve);
  if (!root.get("variants")) {
    // A single-variant file: everything but [serve] is an ordinary config.
    if (c.serve.shadow)
      throw ConfigError(where(origin, serve->get("shadow")->source()) +
                        ": serve.shadow: a shadow needs [[variants]] to compare against");
    c.variants.push_back(ServeVariant{"default", 1, Config{}});
    if (c.serve.baseline.empty()) c.serve.baseline = "default";
    check_names(c, serve);
    root.erase("serve");  // `serve` dangles from here on
    c.variants[0].config = parse_config(root, origin);
    c.log_level = c.variants[0].config.log_level;
    return c;
  }
  for (const char* t : {"model", "backend", "scheduler", "engine", "sampling"})
    if (const toml::node* n = root.get(t))
      throw ConfigError(where(origin, n->source()) + ": " + t +
                        ": a file with [[variants]] takes [variants." + t +
                        "] inside each entry, not a top-level [" + t + "]");
  TableReader top(origin, root, "");
  const auto [dirs, models_dir] = read_variant_file_keys(top, c.log_level);
  top.mark("serve");
  top.mark("variants");
  top.reject_unknown();  // top-level [model] etc. belong inside a variant here
  std::vector<double> weights;
  auto tables = parse_variant_tables(root, origin, dirs, {"weight"},
                                     [&](TableReader& r, const toml::table&, size_t) {
                                       float w = 1;
                                       r.read_float("weight", w, 0, 1e6);
                                       weights.push_back(w);
                                       return false;  // the rest is the variant's config
                                     });
  double total = 0;
  for (size_t i = 0; i < tables.size(); ++i) {
    total += weights[i];
    if (tables[i].config.models_dir.empty()) tables[i].config.models_dir = models_dir;
    c.variants.push_back(ServeVariant{tables[i].name, weights[i], std::move(tables[i].config)});
  }
  if (total <= 0)
    throw ConfigError(where(origin, root.get("variants")->source()) +
                      ": variants.weight: every weight is 0, no variant would get traffic");
  if (c.serve.baseline.empty()) c.serve.baseline = c.variants.front().name;
  check_names(c, serve);
  return c;
}

ServeConfig load_serve_config(const std::filesystem::path& path) {
  return parse_serve_config(read_text_file(path), path.string());
}

std::string fingerprint(const Config& c) {
  std::ostringstream os;
  auto choice = [&](const char* k, const PluginChoice& p) {
    os << k << '=' << p.plugin << '/' << static_cast<int>(p.isolation) << '/' << p.fallback << '/'
       << p.require_device;
    for (const auto& [key, val] : p.params) os << ';' << key << '=' << val;
    os << '\n';
  };
  os << "model=" << c.model.path << '|' << c.model.generate << '|' << c.model.seed << '|'
     << c.model.dtype << '|' << c.model.pure << '\n';
  choice("backend", c.backend);
  choice("scheduler", c.scheduler);
  const auto& e = c.engine;
  os << "engine=" << e.kv_block_size << ',' << e.kv_blocks << ',' << e.max_seqs << ','
     << e.max_batch_tokens << ',' << e.max_context << ',' << e.prefix_caching << ',' << e.overlap
     << '\n';
  const auto& s = c.sampling;
  os << "sampling=" << s.temperature << ',' << s.top_k << ',' << s.top_p << ',' << s.seed << ','
     << s.max_tokens << '\n';
  const auto& t = c.triage;
  os << "triage=" << t.enabled << ',' << t.plugin << ',' << t.force_full << ',' << t.light_experts;
  for (const auto& [key, val] : t.params) os << ';' << key << '=' << val;
  os << '\n';
  for (const auto& d : c.plugin_dirs) os << "dir=" << d.string() << '\n';
  os << "models_dir=" << c.models_dir.string() << '\n';
  return os.str();
}

}  // namespace sy::server
