// The decoder's tensor table and key rules on llama files with llama.cpp's optional tensors and
// keys: each feature against the independent naive forward on both CPU backends, tensors the
// architecture does not use and keys that change the math refused by name, and neutral values
// and keys the architecture never reads accepted without changing a logit.
#include <gtest/gtest.h>

#include <functional>

#include "gguf/gguf.h"
#include "gguf_copy.h"
#include "host/plugin_host.h"
#include "llama_variant.h"
#include "modelgen/generator.h"
#include "naive_llama.h"
#include "nmse.h"
#include "tiny_model.h"

namespace fs = std::filesystem;

namespace {

using sy::gguf::Value;
using sy::test::LlamaVariant;
using sy::test::Loaded;

fs::path write(const LlamaVariant& v, const std::string& name, uint64_t seed = 7) {
  const fs::path p = fs::path(testing::TempDir()) / ("sy-variant-" + name + ".gguf");
  sy::test::write_llama_variant(v, seed, p);
  return p;
}

std::vector<int32_t> tokens(int n, int vocab) {
  std::vector<int32_t> t(n);
  for (int i = 0; i < n; ++i) t[i] = (i * 53 + 11) % vocab;
  return t;
}

// The message load_model throws for the file, or "" when it loads.
std::string load_error(const fs::path& p, const std::string& backend = "cpu_ref") {
  try {
    Loaded m(p, backend);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

struct Feature {
  std::string name;
  std::function<void(LlamaVariant&)> set;
};

const std::vector<Feature>& features() {
  static const std::vector<Feature> f = {
      {"biases", [](LlamaVariant& v) { v.biases = true; }},
      {"scales", [](LlamaVariant& v) { v.scales = true; }},
      {"rope_freqs", [](LlamaVariant& v) { v.rope_freqs = true; }},
      {"fused_qkv", [](LlamaVariant& v) { v.fused_qkv = v.biases = v.scales = true; }},
      {"head_dim_24", [](LlamaVariant& v) { v.head_dim = 24; }},  // q width 96 != n_embd 64
      {"linear_scaling",
       [](LlamaVariant& v) {
         v.rope_scaling = "linear";
         v.rope_factor = 2.0f;
         v.rope_attn_factor = 1.25f;
       }},
      {"yarn",
       [](LlamaVariant& v) {
         v.rope_scaling = "yarn";
         v.rope_factor = 4.0f;
         v.orig_ctx = 4096;  // the ramp spans pairs 2 to 6 of 8
       }},
      {"everything",
       [](LlamaVariant& v) {
         v.biases = v.scales = v.rope_freqs = true;
         v.head_dim = 24;
         v.rope_scaling = "yarn";
         v.rope_factor = 4.0f;
         v.orig_ctx = 4096;
       }},
  };
  return f;
}

class DecoderFeature : public testing::TestWithParam<std::tuple<std::string, size_t>> {};

// F32 throughout; the runtime's RoPE angle is ggml's F32 recipe and the reference's is exact, so
// the bound is the F32 one of the plain runtime tests.
TEST_P(DecoderFeature, LogitsMatchTheNaiveForward) {
  const auto& [backend, i] = GetParam();
  const Feature& f = features()[i];
  LlamaVariant v;
  f.set(v);
  Loaded m(write(v, f.name), backend);
  sy::test::NaiveLlama ref(*m.file);
  const auto toks = tokens(19, ref.n_vocab());
  const auto got = m.prefill(toks);
  const auto want = ref.logits(toks);
  ASSERT_EQ(got.size(), toks.size() * size_t(ref.n_vocab()));
  for (size_t t = 0; t < toks.size(); ++t) {
    std::vector<float> row(got.begin() + t * ref.n_vocab(), got.begin() + (t + 1) * ref.n_vocab());
    EXPECT_LT(sy::test::nmse(row, want[t]), 1e-9) << f.name << " position " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(Features, DecoderFeature,
                         testing::Combine(testing::Values("cpu_ref", "cpu_onednn"),
                                          testing::Range(size_t(0), size_t(8))),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  features()[std::get<1>(info.param)].name;
                         });

// Each feature changes the logits, so the test above can fail: a variant draws the plain file's
// weights and only adds its own (the fused QKV and the wider heads change the weights' layout and
// are left out).
TEST(DecoderTables, EachFeatureChangesTheLogits) {
  LlamaVariant plain;
  Loaded base(write(plain, "plain"), "cpu_ref");
  const auto toks = tokens(19, plain.n_vocab);
  const auto b = sy::test::widen(base.prefill(toks));
  for (const Feature& f : features()) {
    if (f.name == "fused_qkv" || f.name == "head_dim_24" || f.name == "everything") continue;
    LlamaVariant v;
    f.set(v);
    Loaded m(write(v, "changed-" + f.name), "cpu_ref");
    EXPECT_GT(sy::test::nmse(m.prefill(toks), b), 1e-6) << f.name;
  }
}

TEST(DecoderTables, RefusesATensorTheArchitectureDoesNotUse) {
  LlamaVariant v;
  v.extra_tensors = {"blk.0.attn_q_norm.weight", "blk.1.attn_k_norm.weight"};
  const fs::path p = write(v, "extra-tensor");
  EXPECT_EQ(load_error(p),
            p.string() +
                ": tensor blk.0.attn_q_norm.weight is not used by the llama architecture (not in "
                "llama.cpp's tensor table for it either); refusing the file rather than ignoring "
                "the tensor (1 more unused: blk.1.attn_k_norm.weight)");
}

// jamba.cpp creates no attention output bias and takes no rope_freqs, unlike llama.cpp's llama.
TEST(DecoderTables, RefusesALlamaTensorInAJambaFile) {
  const fs::path src = fs::path(testing::TempDir()) / "sy-tables-jamba.gguf";
  sy::model::write_random_model(sy::model::preset_shape("hybrid-tiny"), "f32", 3, src);
  auto f = sy::gguf::File::open(src);
  sy::gguf::Writer w = sy::test::copy_gguf(*f);
  const int64_t E = f->find_tensor("token_embd.weight")->ne[0];
  const std::vector<float> bias(E, 0.5f);
  w.add_tensor("blk.1.attn_output.bias", SY_DTYPE_F32, {E}, bias.data(), bias.size() * 4);
  const fs::path p = fs::path(testing::TempDir()) / "sy-tables-jamba-bias.gguf";
  w.write(p);
  EXPECT_EQ(load_error(p),
            p.string() +
                ": tensor blk.1.attn_output.bias is not used by the jamba architecture (not in "
                "llama.cpp's tensor table for it either); refusing the file rather than ignoring "
                "the tensor");
}

TEST(DecoderTables, RefusesKeysThatChangeTheMathByName) {
  struct Case {
    std::string key;
    Value value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"llama.rope.scaling.type", Value::of_str("longrope"),
       "llama.rope.scaling.type 'longrope' is not implemented"},
      {"llama.rope.scaling.type", Value::of_str("ntk"),
       "llama.rope.scaling.type 'ntk' is unknown (llama.cpp knows none, linear, yarn, longrope)"},
      {"llama.attention.causal", Value::of_bool(false),
       "llama.attention.causal = false: non-causal attention is not implemented"},
      {"llama.expert_group_count", Value::of_u32(4),
       "llama.expert_group_count = 4: grouped expert selection is not implemented"},
      {"llama.attention.value_length", Value::of_u32(8),
       "llama.attention.value_length (8) differs from key_length (16): the llama graph needs "
       "them equal"},
      {"llama.rope.dimension_count", Value::of_u32(8),
       "llama.rope.dimension_count: invalid n_rot: 8, expected 16"},
      {"llama.feed_forward_length",
       Value::of_array(sy::gguf::ValueType::UINT32, {Value::of_u32(96), Value::of_u32(64)}),
       "llama.feed_forward_length differs between layers (96 and 64); per-layer sizes are not "
       "supported"},
  };
  for (const Case& c : cases) {
    LlamaVariant v;
    v.keys = {{c.key, c.value}};
    const fs::path p = write(v, "bad-key");
    EXPECT_EQ(load_error(p), p.string() + ": " + c.message) << c.key;
  }
}

// llama.cpp reads these for llama at their neutral value, or never reads them for llama at all
// (softcapping, attention.scale and the yarn_* keys belong to other archs): the logits are the
// same bits as without them.
TEST(DecoderTables, NeutralValuesAndKeysLlamaNeverReadsChangeNothing) {
  LlamaVariant plain;
  LlamaVariant v;
  v.keys = {
      {"llama.attention.causal", Value::of_bool(true)},
      {"llama.expert_group_count", Value::of_u32(0)},
      {"llama.rope.scaling.type", Value::of_str("linear")},
      {"llama.rope.scaling.factor", Value::of_f32(0.0f)},
      {"llama.rope.scaling.attn_factor", Value::of_f32(1.0f)},
      {"llama.rope.scaling.finetuned", Value::of_bool(true)},
      {"llama.pooling_type", Value::of_u32(1)},
      {"llama.attn_logit_softcapping", Value::of_f32(50.0f)},
      {"llama.final_logit_softcapping", Value::of_f32(30.0f)},
      {"llama.attention.scale", Value::of_f32(0.5f)},
      {"llama.rope.scaling.yarn_beta_fast", Value::of_f32(64.0f)},
      {"llama.expert_weights_scale", Value::of_f32(2.5f)},
      {"llama.embedding_scale", Value::of_f32(12.0f)},
  };
  Loaded a(write(plain, "neutral-plain"), "cpu_ref");
  Loaded b(write(v, "neutral-keys"), "cpu_ref");
  const auto toks = tokens(11, plain.n_vocab);
  EXPECT_EQ(a.prefill(toks), b.prefill(toks));
}

// The `.input_scale` tensors llama.cpp's generic pass takes are not applied by its llama graph
// (only cohere2-moe's graph multiplies them in), so a file with them gives the logits of the same
// file without them.
TEST(DecoderTables, InputScalesAreTakenButNotApplied) {
  LlamaVariant v;
  v.scales = true;
  const fs::path p = write(v, "input-scales");
  auto f = sy::gguf::File::open(p);
  sy::gguf::Writer w = sy::test::copy_gguf(
      *f, [](const std::string& name) { return name.find(".input_scale") == std::string::npos; });
  const fs::path q = fs::path(testing::TempDir()) / "sy-variant-no-input-scales.gguf";
  w.write(q);
  Loaded a(p, "cpu_ref"), b(q, "cpu_ref");
  const auto toks = tokens(9, v.n_vocab);
  EXPECT_EQ(a.prefill(toks), b.prefill(toks));
}

}  // namespace
