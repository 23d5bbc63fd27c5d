#include "model/model.h"

#include <stdexcept>

#include "gguf/gguf.h"
#include "model/jamba_model.h"
#include "model/llama_model.h"

namespace sy::model {

std::unique_ptr<Model> load_model(const gguf::File& file, Backend& backend) {
  const std::string arch = file.require_string("general.architecture");
  if (arch == "llama") return std::make_unique<LlamaModel>(file, backend);
  if (arch == "mamba" || arch == "jamba") return std::make_unique<JambaModel>(file, backend);
  throw std::runtime_error(file.origin() + ": general.architecture '" + arch +
                           "' is not supported (supported: llama, mamba, jamba)");
}

}  // namespace sy::model
