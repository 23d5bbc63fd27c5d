// Lets `[model] generate = "<preset>"` write a missing model file: registers the random-model
// writer as the engine's model-file maker (engine/variant.h). Programs that accept such configs
// (the cli, the tests) call it once at start.
#pragma once

#include "config/config.h"

namespace sy::modelgen {

// Writes the configured preset at model.path (creating its folder) with model.dtype and seed.
void write_configured_model(const ModelConfig& model);
void install_generate_hook();

}  // namespace sy::modelgen
