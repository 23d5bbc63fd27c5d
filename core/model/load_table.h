// The loader's side of an architecture's tensor table: binds each tensor the table names to the
// file's bytes (WeightMap: one zero-copy buffer, shape and dtype checked), takes what the
// architecture takes without applying it, and, once the table is done, refuses a file with a
// tensor nothing took, naming it.
#pragma once

#include <string>
#include <vector>

#include "model/tensor_table.h"
#include "model/weight_map.h"

namespace sy::gguf {
class File;
}

namespace sy::model {

class LoadTable final : public TensorTable {
 public:
  LoadTable(WeightMap& weights, const gguf::File& file, std::vector<std::string>& unapplied_out)
      : w_(weights), f_(file), unapplied_(unapplied_out) {}

  const sy_tensor* take(const TensorSpec& spec) override;
  float scale(const std::string& name, bool applied) override;
  void unapplied(const std::string& name, std::initializer_list<int64_t> ne) override;
  sy_tensor packed(const sy_tensor& t) override { return w_.matmul_only(t); }
  sy_tensor permuted(const sy_tensor& t, const std::vector<int64_t>& perm) override {
    return w_.permuted(t, perm);
  }
  bool has(const std::string& name) const override;

  // Throws naming the first tensor of the file nothing took (and counting the others).
  void refuse_unused(const std::string& arch) const;

 private:
  WeightMap& w_;
  const gguf::File& f_;
  std::vector<std::string>& unapplied_;
};

}  // namespace sy::model
