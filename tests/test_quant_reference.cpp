// The reference quantizers against llama.cpp: tiny-llama-f32.gguf is the source of every
// tiny-llama-<TYPE>.gguf (llama-quantize, no importance matrix), so quantizing each of its
// tensors to the type llama.cpp chose must give llama.cpp's bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <set>

#include "gguf/gguf.h"
#include "reference_data.h"
#include "switchyard/common/dtype.h"

namespace {

namespace dtype = sy::dtype;
using sy::test::reference_models;

TEST(ReferenceQuantizers, EveryTensorOfEveryReferenceFileIsByteExact) {
  auto f32 = sy::gguf::File::open(reference_models() / "tiny-llama-f32.gguf");
  std::set<uint32_t> exact_types;
  for (const std::string& type : sy::test::reference_quant_types()) {
    SCOPED_TRACE("tiny-llama-" + type);
    auto q = sy::gguf::File::open(reference_models() / ("tiny-llama-" + type + ".gguf"));
    ASSERT_EQ(q->tensors().size(), f32->tensors().size());
    for (const auto& t : q->tensors()) {
      const sy::gguf::TensorInfo* src = f32->find_tensor(t.name);
      ASSERT_NE(src, nullptr) << t.name;
      ASSERT_EQ(src->type, (uint32_t)SY_DTYPE_F32);
      ASSERT_EQ(src->n_elements(), t.n_elements()) << t.name;
      std::vector<uint8_t> mine(t.nbytes);
      dtype::row_from_f32(t.type, reinterpret_cast<const float*>(src->data), mine.data(),
                          t.n_elements());
      // Count differing blocks so a failure says how far off, not just that it is.
      const int64_t bb = dtype::block_bytes(t.type), blocks = (int64_t)t.nbytes / bb;
      int64_t bad = 0;
      for (int64_t b = 0; b < blocks; ++b)
        bad += std::memcmp(mine.data() + b * bb, t.data + b * bb, bb) != 0;
      EXPECT_EQ(bad, 0) << t.name << " (" << dtype::name(t.type) << "): " << bad << " of " << blocks
                        << " blocks differ";
      if (bad == 0) exact_types.insert(t.type);
    }
  }
  // Every quantised type the files hold was met at least once.
  for (uint32_t t : {SY_DTYPE_Q4_0, SY_DTYPE_Q4_1, SY_DTYPE_Q5_0, SY_DTYPE_Q5_1, SY_DTYPE_Q8_0,
                     SY_DTYPE_Q2_K, SY_DTYPE_Q3_K, SY_DTYPE_Q4_K, SY_DTYPE_Q5_K, SY_DTYPE_Q6_K,
                     SY_DTYPE_IQ4_NL, SY_DTYPE_IQ4_XS})
    EXPECT_TRUE(exact_types.count(t)) << dtype::name(t) << " never byte-exact";
}

}  // namespace
