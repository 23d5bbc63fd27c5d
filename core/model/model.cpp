#include "model/model.h"

#include "model/decoder_model.h"

namespace sy::model {

std::unique_ptr<Model> load_model(const gguf::File& file, Backend& backend) {
  return std::make_unique<DecoderModel>(file, backend);
}

}  // namespace sy::model
