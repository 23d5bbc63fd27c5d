// [model] generate: writes a random-weight model where the config points, when the file is
// missing, and only inside the models directory (models_dir, default "models"): a config cannot
// make the engine create files or directories anywhere else, nor overwrite a file that exists.
// What an interrupted generation left behind is removed at the next start.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "config/config.h"

namespace sy::engine {

// Throws std::runtime_error("<origin>: model.generate: ...") for a path outside models_dir.
void ensure_model_file(const ModelConfig& model, const std::filesystem::path& models_dir,
                       const std::string& origin = "config");

// Deletes <file>.tmp.<pid>.<n> (the GGUF writer's) and <file>.partial.<pid> (ours) in `dir`
// whose process is gone; returns how many.
size_t remove_stale_generation_files(const std::filesystem::path& dir);

}  // namespace sy::engine
