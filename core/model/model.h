// What the engine needs from a model architecture: one forward step over a batch of sequence
// chunks. Attention layers read and write the paged KV cache; recurrent (SSM) layers keep a fixed
// size state per sequence in a slot the engine assigns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host/backend.h"
#include "model/kv_cache.h"

namespace sy::gguf {
class File;
}

namespace sy::model {

// A copy of a sequence's recurrent state into a prefix-cache snapshot slot, taken once `after`
// tokens of its chunk are computed (1 .. n_tokens).
struct StateSnapshot {
  uint32_t after = 0;
  int32_t slot = -1;
};

// One sequence's share of a forward pass: n_tokens tokens at positions pos0 .. pos0+n_tokens-1,
// whose keys go to the slots its block table maps them to.
struct SeqInput {
  const int32_t* tokens = nullptr;
  uint32_t n_tokens = 0;
  uint32_t pos0 = 0;
  const std::vector<int32_t>* blocks = nullptr;
  bool want_logits = true;  // logits of its last token (or of all tokens with all_logits)
  int32_t state_slot = -1;  // recurrent-state slot (models with recurrent layers); reset at pos0 0
  int32_t n_expert_used = 0;  // MoE layers: experts per token (0: the model's default; fewer is
                              // the triage "light" path), in [1, n_expert]
  // Hybrid prefix caching (models with recurrent layers): a snapshot slot whose state is copied
  // into state_slot before the pass (a prefix-cache hit resuming at pos0), and snapshots to take.
  int32_t restore_from = -1;
  const std::vector<StateSnapshot>* snapshots = nullptr;
  // The sliding-window layers' table when the cache gives them a pool of their own: the indexes
  // of `blocks`, -1 before the window (KvCache::advance_window).
  const std::vector<int32_t>* window_blocks = nullptr;
  // With want_logits: every token's logits (a prompt's logprobs). Last, so the positional
  // initializers above keep their meaning.
  bool all_logits = false;
};

struct ModelInfo {
  std::string arch;  // general.architecture
  uint32_t n_vocab = 0;
  uint32_t n_ctx = 0;
  uint32_t n_layer = 0;
  uint32_t n_attn_layers = 0;     // layers that use the KV cache
  uint32_t kv_row_width = 0;      // floats per cached key (and value): the widest layer's
  std::vector<uint32_t> kv_row_widths;  // per attention layer (Gemma 4's differ)
  std::vector<uint32_t> kv_windows;     // per attention layer: its sliding window (0: global)
  uint64_t state_bytes_per_seq = 0;  // recurrent state of one sequence (0: none)
  uint64_t n_params = 0;
  uint64_t n_active_params = 0;   // per token (MoE: only the selected experts)
  uint64_t weight_bytes = 0;      // bytes of weights in the file
  uint64_t bytes_per_token = 0;   // weight bytes one decode token reads
  uint32_t n_expert = 0;          // MoE layers' experts (0: dense)
  uint32_t n_expert_used = 0;     // default experts per token
};

class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelInfo& info() const = 0;
  // Allocates recurrent state for n_slots sequences; a no-op for models without recurrent layers.
  virtual void reserve_state_slots(uint32_t n_slots) { (void)n_slots; }
  // Device bytes held for recurrent state (all reserved slots) and for activations (grown to
  // the largest batch so far): with the KV cache, the model's memory beyond its weights.
  virtual uint64_t state_bytes_allocated() const { return 0; }
  virtual uint64_t activation_bytes() const { return 0; }
  // Returns logits rows (n_vocab floats each) in sequence order: one per sequence that wants
  // logits, or one per token of those sequences when all_logits.
  virtual std::vector<float> forward(const std::vector<SeqInput>& seqs, KvCache& cache,
                                     bool all_logits = false) = 0;
};

// Builds the runtime for the file's general.architecture; throws naming the file and what is
// unsupported. The file must outlive the model (weights may be read in place).
std::unique_ptr<Model> load_model(const gguf::File& file, Backend& backend);

}  // namespace sy::model
