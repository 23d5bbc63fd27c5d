// Lets `[model] generate = "<preset>"` write a missing model file: registers the random-model
// writer as the engine's model-file maker (engine/model_file.h). Programs that accept such configs
// (the cli, the tests) call it once at start.
#pragma once

#include <filesystem>

#include "config/config.h"

namespace sy::modelgen {

// Writes the configured preset at `out` with model.dtype and seed.
void write_configured_model(const ModelConfig& model, const std::filesystem::path& out);
void install_generate_hook();

}  // namespace sy::modelgen
