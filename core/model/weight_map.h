// A GGUF file's tensors as backend tensors: one buffer spans all tensor data (zero copy where the
// backend wraps host memory) and each weight is an offset into it, checked against the shape and
// dtype the runtime expects. It remembers which tensors were taken, so a loader can refuse a
// file with a tensor it does not use.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "host/backend.h"

namespace sy::gguf {
class File;
}

namespace sy::model {

class WeightMap {
 public:
  enum class Kind {
    matrix,  // any dtype the backend multiplies
    f32,     // norms, biases, conv kernels, ssm_a / ssm_d, routers: F32 only
  };
  // The file must outlive the map.
  WeightMap(const gguf::File& file, Backend& backend);

  // Throws std::runtime_error naming the file and tensor when absent or of another shape/dtype.
  const sy_tensor& get(const std::string& name, const std::vector<int64_t>& ne, Kind kind);
  // nullptr when the file has no such tensor.
  const sy_tensor* find(const std::string& name, const std::vector<int64_t>& ne, Kind kind);
  // A matrix the model passes only to matmul, whole: the backend's own layout of it where it
  // has one (weight_pack, ABI 1.4; the map keeps the new buffer and tensor), else t itself.
  const sy_tensor& matmul_only(const sy_tensor& t);
  // A copy of matrix t in which t's row r is row perm[r] (a fused projection's interleaved heads
  // regrouped), in a buffer the map keeps; the file's pages of t go back to the OS.
  const sy_tensor& permuted(const sy_tensor& t, const std::vector<int64_t>& perm);

  // The value of an F32 tensor of shape {1} (a per-tensor `.scale`), read on the host; nullopt
  // when absent. Throws naming the tensor for another shape or dtype.
  std::optional<float> scalar(const std::string& name);
  // Marks a tensor as taken without binding it (accepted but not applied); false when absent.
  // Throws naming it when its shape is not `ne`.
  bool accept(const std::string& name, const std::vector<int64_t>& ne);
  // The file's tensors nothing took, in file order.
  std::vector<std::string> unused() const;

 private:
  const gguf::File& file_;
  Backend& backend_;
  std::unique_ptr<Buffer> buf_;
  std::vector<std::unique_ptr<Buffer>> packed_;  // weight_pack results
  std::vector<std::unique_ptr<Buffer>> copies_;  // permuted() results
  const uint8_t* base_ = nullptr;
  std::vector<std::unique_ptr<sy_tensor>> owned_;
  std::set<std::string, std::less<>> used_;
};

}  // namespace sy::model
