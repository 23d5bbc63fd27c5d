#include "modelgen/generate_hook.h"

#include <filesystem>

#include "engine/model_file.h"
#include "host/log.h"
#include "modelgen/generator.h"

namespace sy::modelgen {

void write_configured_model(const ModelConfig& m, const std::filesystem::path& out) {
  const auto shape = model::preset_shape(m.generate);
  logger()->info("generating {} ({}{} {}, seed {}) at {}", m.generate, m.dtype,
                 m.pure ? " pure" : "", model::count_params(shape), m.seed, m.path);
  model::write_random_model(shape, m.dtype, m.seed, out, m.pure);
}

void install_generate_hook() {
  engine::set_model_file_maker(write_configured_model);
}

}  // namespace sy::modelgen
