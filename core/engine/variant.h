// One runnable variant: the plugins, model, cache, scheduler and engine a Config names.
#pragma once

#include <memory>

#include "config/config.h"
#include "engine/engine.h"
#include "gguf/gguf.h"
#include "host/backend.h"
#include "host/plugin_host.h"
#include "host/scheduler.h"
#include "host/triage_router.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace sy::engine {

struct Variant {
  Config config;
  std::shared_ptr<Plugin> backend_plugin;
  std::shared_ptr<Plugin> scheduler_plugin;  // null when [scheduler] isolation = "process"
  std::unique_ptr<Backend> backend;
  std::unique_ptr<gguf::File> file;
  std::unique_ptr<model::Model> model;
  std::unique_ptr<model::KvCache> cache;
  std::unique_ptr<Scheduler> scheduler;
  std::shared_ptr<Plugin> router_plugin;       // [triage] plugin; null without one
  std::unique_ptr<TriageRouter> router;        // built even with force_full (never called then)
  std::unique_ptr<text::Tokenizer> tokenizer;  // null for files without a text vocab
  text::ChatTemplate chat_template;            // how chat requests become prompts
  std::unique_ptr<Engine> engine;

  // Loads everything or throws sy::Error (PluginError, ConfigError, gguf::Error are kinds of it)
  // with the reason; nothing half-built survives a failure.
  static std::unique_ptr<Variant> build(const Config& config);
  ~Variant();
};

}  // namespace sy::engine
