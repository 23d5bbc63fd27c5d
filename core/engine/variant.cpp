#include "engine/variant.h"

#include <algorithm>

#include "engine/model_file.h"
#include "engine/triage_hook.h"
#include "host/log.h"
#include "host/process_scheduler.h"
#include "switchyard/common/error.h"

namespace sy::engine {

Variant::~Variant() {
  // Tear down in dependency order: engine, scheduler, cache and model before the backend, and
  // plugins last.
  engine.reset();
  router.reset();
  scheduler.reset();
  cache.reset();
  model.reset();
  backend.reset();
}

// The configured backend found no device: fail when [backend] requires one, else log and
// build on [backend] fallback (with its default params: the others are the first plugin's).
static void use_fallback_backend(Variant& v, const PluginHost& host) {
  const PluginChoice& b = v.config.backend;
  const std::string why = "backend " + b.plugin + " reports no usable device (" +
                          std::string(v.backend->device().name) + ")";
  if (b.require_device) throw Error(why + " and [backend] require_device is true");
  if (b.fallback.empty()) throw Error(why + " and [backend] names no fallback");
  logger()->warn("{}; falling back to backend {}", why, b.fallback);
  v.backend.reset();
  v.backend_plugin = host.load(SY_PLUGIN_BACKEND, b.fallback);
  v.backend = std::make_unique<Backend>(v.backend_plugin, Params{});
  if (!v.backend->device().available)
    throw Error(why + ", and so does its fallback " + b.fallback + " (" + v.backend->device().name +
                ")");
}

// The sliding-window layers' own pool, sized so that it never runs short, unless [engine]
// swa_cache is "full", prefix caching is on (window blocks are not keyed), or it would not be
// smaller than keeping every position.
static model::WindowPool window_pool(const Config& config, const model::ModelInfo& mi,
                                     uint32_t ctx) {
  const EngineConfig& e = config.engine;
  const uint32_t window =
      mi.kv_windows.empty() ? 0 : *std::max_element(mi.kv_windows.begin(), mi.kv_windows.end());
  if (window == 0 || e.swa_cache == "full") return {};
  if (e.prefix_caching) {
    logger()->info("{}: the sliding-window layers keep every position, as prefix caching needs",
                   config.model.path);
    return {};
  }
  const uint32_t bs = e.kv_block_size;
  const uint32_t blocks =
      model::KvCache::window_pool_size(window, bs, e.max_seqs, e.max_batch_tokens);
  if (uint64_t(blocks) >= uint64_t((ctx + bs - 1) / bs) * e.max_seqs) return {};
  logger()->info(
      "{}: {} of {} attention layers see a window of {} positions: their KV pool holds "
      "{} blocks of {}",
      config.model.path,
      std::count_if(mi.kv_windows.begin(), mi.kv_windows.end(), [](uint32_t w) { return w > 0; }),
      mi.kv_windows.size(), window, blocks, bs);
  return {mi.kv_windows, blocks};
}

std::unique_ptr<Variant> Variant::build(const Config& config) {
  auto v = std::make_unique<Variant>();
  v->config = config;
  PluginHost host(PluginHost::search_path(config.plugin_dirs));
  v->backend_plugin = host.load(SY_PLUGIN_BACKEND, config.backend.plugin);
  // An isolated scheduler is loaded by its child process only: this process never maps it.
  const bool isolated = config.scheduler.isolation == Isolation::process;
  std::filesystem::path isolated_path;
  if (isolated)
    isolated_path = host.locate(SY_PLUGIN_SCHEDULER, config.scheduler.plugin);
  else
    v->scheduler_plugin = host.load(SY_PLUGIN_SCHEDULER, config.scheduler.plugin);
  // The router is built with force_full too, so a bad [triage] fails at load, not on flipping
  // the switch back.
  if (!config.triage.plugin.empty()) {
    v->router_plugin = host.load(SY_PLUGIN_ROUTER, config.triage.plugin);
    v->router = std::make_unique<TriageRouter>(v->router_plugin, config.triage.params);
  }
  v->backend = std::make_unique<Backend>(v->backend_plugin, config.backend.params);
  if (!v->backend->device().available) use_fallback_backend(*v, host);
  ensure_model_file(config.model, config.models_dir, config.origin);
  v->file = gguf::File::open(config.model.path);
  v->model = model::load_model(*v->file, *v->backend);
  check_light_experts(config.triage, v->model->info(), config.model.path);
  try {
    v->tokenizer = text::Tokenizer::from_gguf(*v->file);
  } catch (const std::exception& e) {
    logger()->warn("{}: no text tokenizer ({}); token ids only", config.model.path, e.what());
  }
  v->chat_template = text::ChatTemplate::resolve(
      config.model.chat_template, config.model.chat_template_text.empty()
                                      ? v->file->get_string("tokenizer.chat_template")
                                      : config.model.chat_template_text);
  if (!v->chat_template.ok()) logger()->warn("{}: {}", config.model.path, v->chat_template.error());
  if (!v->chat_template.warning().empty())
    logger()->warn("{}: {}", config.model.path, v->chat_template.warning());
  const auto& mi = v->model->info();
  const uint32_t ctx =
      config.engine.max_context ? std::min(config.engine.max_context, mi.n_ctx) : mi.n_ctx;
  const uint32_t bs = config.engine.kv_block_size;
  const model::WindowPool window = window_pool(config, mi, ctx);
  uint32_t blocks = config.engine.kv_blocks;
  if (blocks == 0) {
    // Enough for max_seqs full contexts, capped at 1 GiB of cache but never below one context.
    uint64_t floats = 0;  // per position, over the attention layers in this pool
    for (size_t l = 0; l < mi.kv_row_widths.size(); ++l)
      if (!window.blocks || !window.windows[l]) floats += mi.kv_row_widths[l];
    const uint64_t per_block = std::max<uint64_t>(
        1, uint64_t(bs) * floats * model::kv_elem_bytes(config.engine.kv_dtype) * 2);
    const uint64_t per_ctx = (ctx + bs - 1) / bs;
    blocks = static_cast<uint32_t>(std::max<uint64_t>(
        per_ctx, std::min<uint64_t>(per_ctx * config.engine.max_seqs, (1ull << 30) / per_block)));
  }
  v->cache = std::make_unique<model::KvCache>(*v->backend, mi.kv_row_widths, bs, blocks,
                                              config.engine.kv_dtype, window);
  // What an operator sizes memory by: the cache, and how many whole contexts it holds.
  const model::KvCache& c = *v->cache;
  logger()->info(
      "{}: KV cache {:.1f} MiB: {} blocks of {} positions ({:.1f} MiB, room for {} x {} "
      "positions){}",
      config.model.path, c.bytes() / 1048576.0, c.pool().total(), bs,
      c.pool().total() * c.bytes_per_block() / 1048576.0,
      c.pool().total() / std::max<uint32_t>(1, c.blocks_for(ctx)), ctx,
      c.windowed()
          ? fmt::format(" + {} sliding-window blocks ({:.1f} MiB)", c.window_pool().total(),
                        c.window_pool().total() * c.bytes_per_window_block() / 1048576.0)
          : std::string());
  v->scheduler = isolated
                     ? make_process_scheduler(isolated_path, config.scheduler.params)
                     : std::make_unique<Scheduler>(v->scheduler_plugin, config.scheduler.params);
  EngineLimits lim;
  lim.max_seqs = config.engine.max_seqs;
  lim.max_batch_tokens = config.engine.max_batch_tokens;
  lim.max_context = ctx;
  if (v->tokenizer) lim.eos = v->tokenizer->end_of_generation();
  lim.prefix_caching = config.engine.prefix_caching;
  lim.overlap = config.engine.overlap;
  const std::string& sc = config.engine.state_cache;
  lim.state_cache = sc == "none" ? StateCache::none : sc == "last" ? StateCache::last : StateCache::all;
  lim.state_cache_slots = config.engine.state_cache_slots;
  lim.state_cache_bytes = uint64_t(config.engine.state_cache_mib) << 20;
  v->engine = std::make_unique<Engine>(*v->model, *v->cache, *v->scheduler, lim);
  if (config.triage.enabled) v->engine->triage = make_triage_hook(v->router.get(), config.triage);
  return v;
}

}  // namespace sy::engine
