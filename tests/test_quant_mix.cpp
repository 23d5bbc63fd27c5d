// `mkmodel --dtype` against llama-quantize: tiny-llama-f32.gguf is mkmodel's output for the
// shape below and seed 11, and llama-quantize wrote every tiny-llama-<TYPE>.gguf from it, so
// writing that model directly in each file type must give llama.cpp's tensor types and bytes.
// Then the mix rules on shapes the reference files do not cover.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>

#include "gguf/gguf.h"
#include "modelgen/generator.h"
#include "modelgen/quant_mix.h"
#include "reference_data.h"
#include "switchyard/common/dtype.h"
#include "switchyard/common/error.h"
#include "switchyard/common/file_type.h"

namespace {

namespace fs = std::filesystem;
namespace dtype = sy::dtype;
using sy::model::ModelShape;
using sy::model::QuantMix;

ModelShape tiny_llama() {
  ModelShape s;
  s.n_vocab = 512, s.n_ctx = 256, s.n_embd = 256, s.n_layer = 2, s.n_ff = 768;
  s.n_head = 4, s.n_head_kv = 2;
  return s;
}

fs::path write(const ModelShape& s, const std::string& type, uint64_t seed) {
  const fs::path p = fs::path(testing::TempDir()) / ("sy-mix-" + type + ".gguf");
  sy::model::write_random_llama(s, type, seed, p);
  return p;
}

TEST(QuantMixAgainstLlamaQuantize, TheF32SourceIsMkmodelsSeed11) {
  const fs::path p = write(tiny_llama(), "f32", 11);
  auto mine = sy::gguf::File::open(p);
  auto ref = sy::gguf::File::open(sy::test::reference_models() / "tiny-llama-f32.gguf");
  ASSERT_EQ(fs::file_size(p), fs::file_size(sy::test::reference_models() / "tiny-llama-f32.gguf"));
  for (const auto& t : ref->tensors())
    ASSERT_EQ(std::memcmp(mine->find_tensor(t.name)->data, t.data, t.nbytes), 0) << t.name;
}

TEST(QuantMixAgainstLlamaQuantize, EveryFileTypeWritesLlamaCppsTypesAndBytes) {
  for (const std::string& type : sy::test::reference_quant_types()) {
    SCOPED_TRACE(type);
    const dtype::FileType* ft = dtype::find_file_type(type);
    ASSERT_NE(ft, nullptr);
    auto mine = sy::gguf::File::open(write(tiny_llama(), type, 11));
    auto ref =
        sy::gguf::File::open(sy::test::reference_models() / ("tiny-llama-" + type + ".gguf"));
    EXPECT_EQ(mine->get_uint("general.file_type"), ref->get_uint("general.file_type"));
    EXPECT_EQ(*mine->get_uint("general.file_type"), ft->id);
    EXPECT_EQ(mine->get_uint("general.quantization_version"), std::optional<uint64_t>(2));
    ASSERT_EQ(mine->tensors().size(), ref->tensors().size());
    for (const auto& t : ref->tensors()) {
      const sy::gguf::TensorInfo* m = mine->find_tensor(t.name);
      ASSERT_NE(m, nullptr) << t.name;
      ASSERT_EQ(dtype::name(m->type), std::string(dtype::name(t.type))) << t.name;
      ASSERT_EQ(m->nbytes, t.nbytes) << t.name;
      EXPECT_EQ(std::memcmp(m->data, t.data, t.nbytes), 0) << t.name << " bytes differ";
    }
  }
}

// llama-quantize's --pure: every matrix it quantizes in the base type, the output too. Q4_0's
// mix differs from pure only in the output matrix, so every other tensor is llama-quantize's
// (tiny-llama-Q4_0.gguf); MXFP4_MOE's pure file has no Q8_0 left.
TEST(QuantMixAgainstLlamaQuantize, PureTypesEveryMatrixInTheBaseType) {
  const fs::path p = fs::path(testing::TempDir()) / "sy-mix-pure.gguf";
  sy::model::write_random_model(tiny_llama(), "q4_0", 11, p, true);
  auto mine = sy::gguf::File::open(p);
  auto ref = sy::gguf::File::open(sy::test::reference_models() / "tiny-llama-Q4_0.gguf");
  ASSERT_EQ(mine->tensors().size(), ref->tensors().size());
  for (const auto& t : ref->tensors()) {
    const sy::gguf::TensorInfo* m = mine->find_tensor(t.name);
    ASSERT_NE(m, nullptr) << t.name;
    if (t.name == "output.weight") {
      EXPECT_STREQ(dtype::name(t.type), "Q6_K");
      EXPECT_STREQ(dtype::name(m->type), "Q4_0");
      continue;
    }
    ASSERT_EQ(m->type, t.type) << t.name;
    EXPECT_EQ(std::memcmp(m->data, t.data, t.nbytes), 0) << t.name << " bytes differ";
  }
  sy::model::write_random_model(tiny_llama(), "mxfp4", 11, p, true);
  const auto mx = sy::gguf::File::open(p);
  for (const auto& t : mx->tensors())
    EXPECT_STREQ(dtype::name(t.type), t.name.find("norm") == std::string::npos ? "MXFP4" : "F32")
        << t.name;
  // No fallback: rows that are not whole blocks are refused by name (the Q4_K_M mix would
  // fall back to Q5_0 there).
  ModelShape odd = tiny_llama();
  odd.n_ff = 800;
  try {
    sy::model::write_random_model(odd, "q4_k_m", 11, p, true);
    ADD_FAILURE() << "a pure file with rows of 800 values was written";
  } catch (const sy::Error& e) {
    EXPECT_STREQ(e.what(),
                 "--pure: blk.0.ffn_down.weight has rows of 800 values, not whole "
                 "blocks of Q4_K (256)");
  }
}

// Types by tensor name for a shape and file type.
std::map<std::string, std::string> types_of(const ModelShape& s, const std::string& type) {
  auto f = sy::gguf::File::open(write(s, type, 3));
  std::map<std::string, std::string> out;
  for (const auto& t : f->tensors()) out[t.name] = dtype::name(t.type);
  return out;
}

// Rows that are not whole super-blocks take llama-quantize's fallbacks: Q4_K -> Q5_0,
// Q6_K -> Q8_0, Q2_K/Q3_K -> Q4_0 (llama.cpp 0253fb21f), IQ4_XS -> IQ4_NL; the output matrix goes
// to Q8_0.
TEST(QuantMix, SmallRowsFallBackAsLlamaQuantizeDoes) {
  ModelShape s = sy::model::preset_shape("dense-tiny");  // n_embd 64, n_ff 128, 2 layers
  auto t = types_of(s, "q4_k_m");
  EXPECT_EQ(t["token_embd.weight"], "Q5_0");
  EXPECT_EQ(t["output.weight"], "Q8_0");
  EXPECT_EQ(t["blk.0.attn_v.weight"], "Q5_0");
  EXPECT_EQ(t["blk.1.attn_v.weight"], "Q8_0");  // use_more_bits: Q6_K, then its fallback
  EXPECT_EQ(t["blk.1.ffn_down.weight"], "Q8_0");
  EXPECT_EQ(t["blk.0.attn_norm.weight"], "F32");
  t = types_of(s, "q2_k");
  EXPECT_EQ(t["blk.0.attn_q.weight"], "Q4_0");
  EXPECT_EQ(t["blk.0.attn_output.weight"], "Q4_0");  // Q3_K in the Q2_K mix, then its fallback
  t = types_of(s, "iq4_xs");
  EXPECT_EQ(t["blk.0.attn_q.weight"], "IQ4_NL");
}

// A tied output: token_embd is the output matrix and gets its type. MoE experts count as
// ffn_down by layer; the router stays F32.
TEST(QuantMix, TiedOutputAndExperts) {
  ModelShape s = tiny_llama();
  s.tied_output = true;
  auto t = types_of(s, "q4_0");
  EXPECT_EQ(t["token_embd.weight"], "Q6_K");
  EXPECT_EQ(t.count("output.weight"), 0u);
  EXPECT_EQ(t["blk.0.attn_q.weight"], "Q4_0");

  ModelShape moe = tiny_llama();
  moe.n_expert = 4, moe.n_expert_used = 2;
  t = types_of(moe, "q4_k_m");
  EXPECT_EQ(t["blk.0.ffn_down_exps.weight"], "Q4_K");
  EXPECT_EQ(t["blk.1.ffn_down_exps.weight"], "Q6_K");
  EXPECT_EQ(t["blk.1.ffn_gate_exps.weight"], "Q4_K");
  EXPECT_EQ(t["blk.0.ffn_gate_inp.weight"], "F32");
}

// The rules by layer on a deeper model: use_more_bits picks the first and last eighth and
// every third layer between; Q3_K_M gives the first two attn_v Q5_K.
TEST(QuantMix, LayerRulesOnEightLayers) {
  ModelShape s = tiny_llama();
  s.n_layer = 8;
  s.n_head = 8, s.n_head_kv = 2;  // n_gqa 4
  const dtype::FileType& q4km = *dtype::find_file_type("q4_k_m");
  const QuantMix mix(q4km, s);
  const char* want[8] = {"Q6_K", "Q4_K", "Q4_K", "Q6_K", "Q4_K", "Q4_K", "Q6_K", "Q6_K"};
  for (int l = 0; l < 8; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    EXPECT_STREQ(dtype::name(mix.type_for(b + "attn_v.weight", 256)), want[l]) << l;
    EXPECT_STREQ(dtype::name(mix.type_for(b + "ffn_down.weight", 768)), want[l]) << l;
    EXPECT_STREQ(dtype::name(mix.type_for(b + "attn_q.weight", 256)), "Q4_K") << l;
  }
  const QuantMix q3(*dtype::find_file_type("q3_k_m"), s);
  EXPECT_STREQ(dtype::name(q3.type_for("blk.1.attn_v.weight", 256)), "Q5_K");
  EXPECT_STREQ(dtype::name(q3.type_for("blk.2.attn_v.weight", 256)), "Q4_K");
  EXPECT_STREQ(dtype::name(q3.type_for("blk.5.attn_output.weight", 256)), "Q4_K");
  const QuantMix q2(*dtype::find_file_type("q2_k"), s);
  EXPECT_STREQ(dtype::name(q2.type_for("blk.3.attn_v.weight", 256)), "Q4_K");  // n_gqa >= 4
  const QuantMix nl(*dtype::find_file_type("iq4_nl"), s);
  EXPECT_STREQ(dtype::name(nl.type_for("blk.0.ffn_down.weight", 768)), "Q5_K");  // i < n/8
  EXPECT_STREQ(dtype::name(nl.type_for("blk.1.ffn_down.weight", 768)), "IQ4_NL");
  EXPECT_STREQ(dtype::name(nl.type_for("blk.1.attn_v.weight", 256)), "Q5_K");
}

// jamba: attn_v's index counts attention layers only; SSM matrices are typed as any matrix,
// ssm_conv1d stays F32; rows too short for any fallback become F16 as llama-quantize does.
TEST(QuantMix, HybridModels) {
  auto t = types_of(sy::model::preset_shape("mamba-tiny"), "q4_k_m");
  EXPECT_EQ(t["blk.0.ssm_dt.weight"], "F16");  // dt_rank 4: no block fits
  EXPECT_EQ(t["blk.0.ssm_conv1d.weight"], "F32");
  EXPECT_EQ(t["blk.0.ssm_in.weight"], "Q5_0");
  ModelShape j = sy::model::preset_shape("hybrid-small");  // attention at layer 2 only
  t = types_of(j, "q4_k_m");
  EXPECT_EQ(t["blk.2.attn_v.weight"], "Q6_K");  // the only attention layer: index 0 of 1
  EXPECT_EQ(t["blk.1.ffn_gate_exps.weight"], "Q4_K");
  // ffn_down rows are n_ff = 192 values: layer 3's Q6_K falls back to Q8_0, layer 1's Q4_K to
  // Q5_0.
  EXPECT_EQ(t["blk.3.ffn_down_exps.weight"], "Q8_0");
  EXPECT_EQ(t["blk.1.ffn_down_exps.weight"], "Q5_0");
}

TEST(QuantMix, FileTypesOfWholeBlocksRefuseOtherRows) {
  try {
    write(sy::model::preset_shape("mamba-tiny"), "q4_0", 1);
    FAIL() << "no error";
  } catch (const sy::Error& e) {
    EXPECT_STREQ(e.what(), "q4_0 needs ssm_dt_rank to be a multiple of 32, it is 4");
  }
  try {
    write(tiny_llama(), "q4_k_xl", 1);
    FAIL() << "no error";
  } catch (const sy::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown dtype 'q4_k_xl' (expected f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, "
              "q2_k, q3_k_s, q3_k_m, q3_k_l, q4_k_s, q4_k_m, q5_k_s, q5_k_m, q6_k, iq4_nl, "
              "iq4_xs, mxfp4_moe)");
  }
}

}  // namespace
