// [model] generate: writes a random-weight model where the config points, when the file is
// missing, and only inside the models directory (models_dir, default "models"): a config cannot
// make the engine create files or directories anywhere else, nor overwrite a file that exists.
// What an interrupted generation left behind is removed at the next start. The engine itself
// never writes models: it asks the model-file maker the program registered (the cli registers
// modelgen's writer, modelgen/generate_hook.h); without one such a config is refused.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>

#include "config/config.h"

namespace sy::engine {

// Writes the model `model` describes (model.generate, dtype, seed) at `out`.
using ModelFileMaker =
    std::function<void(const ModelConfig& model, const std::filesystem::path& out)>;
void set_model_file_maker(ModelFileMaker maker);

// Throws std::runtime_error("<origin>: model.generate: ...") for a path outside models_dir.
void ensure_model_file(const ModelConfig& model, const std::filesystem::path& models_dir,
                       const std::string& origin = "config");

// Deletes <file>.tmp.<pid>.<n> (the GGUF writer's) and <file>.partial.<pid> (ours) in `dir`
// whose process is gone; returns how many.
size_t remove_stale_generation_files(const std::filesystem::path& dir);

}  // namespace sy::engine
