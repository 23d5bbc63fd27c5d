// The random-model writer's two readings of an architecture's tensor table (model/tensor_table.h):
// WriteTable writes each tensor with random values as its Init says, in the matrix type the file
// type's mix gives it; CountTable counts parameters (all, and those one token uses).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "model/model_desc.h"
#include "model/tensor_table.h"
#include "modelgen/generator_detail.h"
#include "modelgen/quant_mix.h"

namespace sy::gguf {
class Writer;
}

namespace sy::model {

// The tensors a table names: taken ones are answered with a placeholder tensor of their shape.
class PlaceholderTable : public TensorTable {
 public:
  float scale(const std::string&, bool) override { return 1.0f; }
  void unapplied(const std::string&, std::initializer_list<int64_t>) override {}
  bool has(const std::string&) const override { return false; }

 protected:
  const sy_tensor* placeholder(const TensorSpec& spec, uint32_t dtype);

 private:
  std::deque<sy_tensor> held_;
};

class WriteTable final : public PlaceholderTable {
 public:
  WriteTable(gguf::Writer& w, detail::Rng& rng, const QuantMix& mix, const ModelDesc& d)
      : w_(w), rng_(rng), mix_(mix), d_(d) {}
  const sy_tensor* take(const TensorSpec& spec) override;

 private:
  float value(const Init& init, int64_t fan_in, int64_t index);
  gguf::Writer& w_;
  detail::Rng& rng_;
  const QuantMix& mix_;
  const ModelDesc& d_;
  std::vector<float> f_;
  std::vector<uint8_t> bytes_;
};

class CountTable final : public PlaceholderTable {
 public:
  explicit CountTable(const ModelDesc& d) : d_(d) {}
  const sy_tensor* take(const TensorSpec& spec) override;
  uint64_t params = 0;         // every element of every tensor written
  uint64_t active_params = 0;  // the unselected experts of one token left out

 private:
  const ModelDesc& d_;
};

}  // namespace sy::model
