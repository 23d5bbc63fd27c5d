// Engine configuration from TOML (TOML++). Every error names the file, the line and the key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/backend.h"
#include "switchyard/common/error.h"

namespace sy {

// A bad configuration (file:line:column and key): commands print it instead of a stack of
// causes, and reloads keep the old variants.
class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& message) : Error(SY_ERR_INVALID_ARG, message) {}
};

// Where a scheduler plugin runs: in the engine's process, or in a child (host/process_scheduler.h).
enum class Isolation { in_process, process };

struct PluginChoice {
  std::string plugin;  // name (looked up in plugin dirs) or a path
  Params params;       // every other key of the table, as text
  Isolation isolation = Isolation::in_process;  // [scheduler] isolation; a host key, not a param
  // [backend] host keys, not params: the backend to use when this one reports no device, and
  // whether a missing device is an error instead.
  std::string fallback;
  bool require_device = false;
};

struct ModelConfig {
  std::string path;       // GGUF file
  std::string generate;   // preset to write at `path` when the file is missing ("" = never)
  uint64_t seed = 1;      // for generate
  std::string dtype = "f32";
  bool pure = false;  // for generate: llama-quantize's --pure (every matrix in dtype's base type)
  std::string chat_template;  // a chat format name (text/chat_template.h) over the file's own
  // A Jinja template over the file's own (llama-server's --chat-template-file): its text, read
  // when the config is.
  std::string chat_template_file, chat_template_text;
};

struct EngineConfig {
  uint32_t kv_block_size = 16;
  uint32_t kv_blocks = 0;         // 0: enough for max_seqs full contexts
  uint32_t max_seqs = 16;         // requests holding KV at once
  uint32_t max_batch_tokens = 2048;  // tokens one forward pass may carry
  uint32_t max_context = 0;       // 0: the model's context length
  bool prefix_caching = false;    // share KV blocks of equal prompt prefixes
  bool overlap = false;           // plan and prepare step N+1 while step N computes
  // Hybrid prefix caching: recurrent-state snapshots at KV-block boundaries ("all"), only the
  // prompt's last ("last") or none ("none": prefix caching off for models with recurrent layers).
  std::string state_cache = "all";
  uint32_t state_cache_slots = 0;  // snapshot budget in state slots; 0: 4 per max_seqs
  uint32_t state_cache_mib = 0;    // snapshot budget in MiB (wins over slots); 0: by slots
  uint32_t kv_dtype = SY_DTYPE_F32;  // KV cache element type: SY_DTYPE_F32 or SY_DTYPE_F16
  // Sliding-window layers: a pool of their own holding each sequence's window ("window"), or
  // every position like the global layers ("full", llama.cpp's --swa-full; prefix caching).
  std::string swa_cache = "window";
};

struct SamplingDefaults {
  float temperature = 0.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  uint64_t seed = 0;
  uint32_t max_tokens = 32;
};

// [triage]: the router that tags each request light or full. No table: every request full.
struct TriageConfig {
  bool enabled = false;          // the table is present
  std::string plugin;            // router plugin: name (looked up in plugin dirs) or a path
  bool force_full = false;       // the fallback switch: every request full, the router never called
  uint32_t light_experts = 0;    // MoE experts per token on the light path (0: the model's default)
  std::string light_experts_at;  // "file:line:col" of light_experts, for checks against the model
  Params params;                 // [triage.params], as text
};

struct Config {
  std::string origin;  // file name, for messages
  ModelConfig model;
  PluginChoice backend;
  PluginChoice scheduler;
  EngineConfig engine;
  SamplingDefaults sampling;
  TriageConfig triage;
  std::vector<std::filesystem::path> plugin_dirs;  // searched before the defaults
  // Where [model] generate may write (and create directories); empty: "models", relative to
  // the working directory like every path here.
  std::filesystem::path models_dir;
  std::string log_level = "warn";
};

// Throws ConfigError("<file>:<line>:<col>: <key>: <problem>").
Config load_config(const std::filesystem::path& path);
Config parse_config(const std::string& text, const std::string& origin);

}  // namespace sy
