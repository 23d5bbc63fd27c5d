// Model shapes from TOML files (`switchyard mkmodel --shape`): the generator's input, read with
// the config reader's errors (file:line:column and key).
#pragma once

#include <filesystem>
#include <string>

#include "modelgen/generator.h"

namespace sy {

// A model shape from TOML: optional `preset = "..."` as the base, then any ModelShape field by
// name (n_vocab, n_ctx, n_embd, n_layer, n_ff, n_head, n_head_kv, rope_freq_base, rms_eps,
// tied_output). Unknown keys are refused. Throws ConfigError.
model::ModelShape load_shape(const std::filesystem::path& path,
                             const std::string& base_preset = "");

}  // namespace sy
