// Tensor shape and size checks shared by the reader and the writer.
#include "gguf_detail.h"
#include "switchyard/common/dtype.h"

namespace sy::gguf::detail {

uint64_t tensor_nbytes(const std::string& origin, const std::string& subject, uint32_t type,
                       const int64_t* ne, uint32_t n_dims) {
  for (uint32_t d = 0; d < n_dims; ++d) {
    if (ne[d] < 1) {
      fail(
          origin, Errc::bad_dims,
          subject + " ne[" + std::to_string(d) + "] = " + std::to_string(ne[d]) + ", must be >= 1");
    }
  }
  int64_t n = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    if (__builtin_mul_overflow(n, ne[d], &n)) {
      fail(origin, Errc::bad_dims, subject + " element count overflows int64");
    }
  }
  if (!sy::dtype::is_known(type)) {
    const std::string ggml = sy::dtype::ggml_only_name(type);
    fail(origin, Errc::bad_tensor_type,
         subject + " type " + std::to_string(type) +
             (ggml.empty() ? " is unknown" : " (" + ggml + ") is not supported") +
             "; supported types: " + sy::dtype::type_names());
  }
  const int64_t blk = sy::dtype::block_elems(type);
  if (ne[0] % blk != 0) {
    fail(origin, Errc::bad_tensor_type,
         subject + " ne[0] = " + std::to_string(ne[0]) + " is not a multiple of the " +
             sy::dtype::name(type) + " block size " + std::to_string(blk));
  }
  uint64_t bytes = 0;
  bool over = __builtin_mul_overflow(static_cast<uint64_t>(ne[0] / blk),
                                     static_cast<uint64_t>(sy::dtype::block_bytes(type)), &bytes);
  for (uint32_t d = 1; d < n_dims && !over; ++d) {
    over = __builtin_mul_overflow(bytes, static_cast<uint64_t>(ne[d]), &bytes);
  }
  if (over) fail(origin, Errc::bad_dims, subject + " byte size overflows uint64");
  return bytes;
}

}  // namespace sy::gguf::detail
