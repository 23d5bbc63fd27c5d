// The jamba / mamba / llama-MoE runtimes against the independent naive forward (naive_hybrid.h),
// cpu_onednn against cpu_ref, the recurrent-state path (decode one token at a time, chunked
// prefill) against full prefill, state-slot isolation in batches, the n_expert_used override and
// the expert activation counters.
//
// Tolerances (normalised MSE, llama.cpp's cross-backend measure): F32 weights vs the double
// reference < 1e-9; F16 / Q8_0 weights (dequantised identically in the reference) < 1e-7, but
// cpu_onednn's default 8-bit GEMV activations (llama.cpp's Q8_0 blocks) < 1e-4;
// cpu_onednn vs cpu_ref < 1e-10 with max |diff| < 1e-4 (observed: ~1e-13 and ~3e-6 on logits of
// magnitude ~1); decode or chunked prefill vs one prefill
// < 1e-10 (cpu_ref: identical arithmetic, so the bound is loose there).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "gguf/gguf.h"
#include "host/host_api.h"
#include "host/plugin_host.h"
#include "model/decoder_model.h"
#include "modelgen/generator.h"
#include "naive_hybrid.h"
#include "nmse.h"
#include "switchyard/common/error.h"
#include "tiny_model.h"

namespace fs = std::filesystem;

namespace {

using sy::test::host;

// A generated model per (preset, dtype), seed 7.
const fs::path& model_file(const std::string& preset, const std::string& dtype) {
  return sy::test::generated_model_file(preset, dtype, 7, "hybrid");
}

// A model with `slots` recurrent-state slots, run one sequence at a time in prefill chunks.
struct Loaded : sy::test::Loaded {
  Loaded(const fs::path& p, const std::string& backend_name, uint32_t slots = 4,
         uint32_t blocks = 64, const sy::Params& params = {})
      : sy::test::Loaded(p, backend_name, blocks, SY_DTYPE_F32, params, slots) {}
  uint32_t V() const { return model->info().n_vocab; }
  // All-position logits of one sequence in `slot`, prefilled in chunks of the given sizes (the
  // last one takes the rest), then the KV blocks are released.
  std::vector<float> run(const std::vector<int32_t>& toks, std::vector<uint32_t> chunks = {},
                         int32_t slot = 0, int32_t k = 0) {
    std::vector<int32_t> blocks;
    EXPECT_TRUE(cache->pool().allocate(cache->blocks_for(toks.size()), blocks));
    std::vector<float> out;
    uint32_t pos = 0;
    for (size_t c = 0; pos < toks.size(); ++c) {
      const uint32_t n = c < chunks.size() ? chunks[c] : uint32_t(toks.size()) - pos;
      sy::model::SeqInput in{&toks[pos], n, pos, &blocks, true, slot, k};
      const auto step = model->forward({in}, *cache, true);
      out.insert(out.end(), step.begin(), step.end());
      pos += n;
    }
    cache->pool().release(blocks);
    return out;
  }
};

std::vector<int32_t> sample_tokens(int n, int vocab, int salt = 0) {
  std::vector<int32_t> t(n);
  for (int i = 0; i < n; ++i) t[i] = (i * 37 + salt * 11 + 5) % vocab;
  return t;
}

using sy::test::nmse;
using sy::test::widen;

std::vector<float> row(const std::vector<float>& all, size_t t, size_t V) {
  return {all.begin() + t * V, all.begin() + (t + 1) * V};
}

}  // namespace

// ---- against the naive reference ----

class HybridAgainstNaive
    : public testing::TestWithParam<std::tuple<std::string, std::string, std::string>> {};

TEST_P(HybridAgainstNaive, LogitsMatchTheReferenceAtEveryPosition) {
  const auto& [backend, preset, dtype] = GetParam();
  Loaded m(model_file(preset, dtype), backend);
  sy::test::NaiveHybrid ref(*m.file);
  const auto toks = sample_tokens(21, ref.n_vocab());
  const auto got = m.run(toks);
  const auto want = ref.logits(std::vector<int>(toks.begin(), toks.end()));
  ASSERT_EQ(got.size(), toks.size() * size_t(ref.n_vocab()));
  for (size_t t = 0; t < toks.size(); ++t)
    EXPECT_LT(nmse(row(got, t, m.V()), want[t]), dtype == "f32" ? 1e-9 : 1e-7) << "position " << t;
}

INSTANTIATE_TEST_SUITE_P(Backends, HybridAgainstNaive,
                         testing::Combine(testing::Values("cpu_ref", "cpu_onednn"),
                                          testing::Values("hybrid-tiny", "mamba-tiny", "moe-tiny"),
                                          testing::Values("f32", "f16")),
                         [](const auto& info) {
                           std::string s = std::get<0>(info.param) + "_" + std::get<1>(info.param) +
                                           "_" + std::get<2>(info.param);
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

// cpu_onednn's integer kernels quantize the activations of Q8_0 matmuls to 8-bit blocks by
// default, decode and prefill alike, as llama.cpp's CPU backend does: its logits on llama.cpp's
// own tiny-llama-Q8_0.gguf differ from the exact ones by NMSE 6.1e-5 (test_reference_logits);
// here, through the recurrent layers too, up to 1.2e-4, so 3e-4 (a wrong scale, offset or sign
// gives NMSE near 1); with act_bits=16 (nearly exact int16 activations) the exact bound of 1e-7
// still holds.
TEST(HybridAgainstNaiveQ8, JambaAndMixtralWithQ8Weights) {
  struct Run {
    const char* backend;
    sy::Params params;
    double bound;
  };
  const Run runs[] = {
      {"cpu_ref", {}, 1e-7}, {"cpu_onednn", {{"act_bits", "16"}}, 1e-7}, {"cpu_onednn", {}, 3e-4}};
  for (const char* preset : {"hybrid-tiny", "moe-tiny"})
    for (const Run& r : runs) {
      Loaded m(model_file(preset, "q8_0"), r.backend, 4, 64, r.params);
      sy::test::NaiveHybrid ref(*m.file);
      const auto toks = sample_tokens(13, ref.n_vocab(), 2);
      const auto got = m.run(toks);
      const auto want = ref.logits(std::vector<int>(toks.begin(), toks.end()));
      for (size_t t = 0; t < toks.size(); ++t)
        EXPECT_LT(nmse(row(got, t, m.V()), want[t]), r.bound)
            << preset << " " << r.backend << (r.params.empty() ? "" : " act_bits=16")
            << " position " << t;
    }
}

// The figure the issue asks for: cpu_onednn vs cpu_ref logits of generated jamba and mamba
// models (and Mixtral-style llama).
TEST(HybridBackends, OnednnAgreesWithRefWithinTolerance) {
  for (const char* preset : {"hybrid-tiny", "mamba-tiny", "moe-tiny", "hybrid-small"})
    for (const char* dtype : {"f32", "f16"}) {
      Loaded a(model_file(preset, dtype), "cpu_ref"), b(model_file(preset, dtype), "cpu_onednn");
      const auto toks = sample_tokens(40, int(a.V()), 3);
      const auto ra = a.run(toks), rb = b.run(toks);
      double max_abs = 0;
      for (size_t i = 0; i < ra.size(); ++i)
        max_abs = std::max<double>(max_abs, std::fabs(ra[i] - rb[i]));
      const double e = nmse(rb, widen(ra));
      std::printf("  %s %s: cpu_onednn vs cpu_ref NMSE %.2e, max |diff| %.2e\n", preset, dtype, e,
                  max_abs);
      EXPECT_LT(e, 1e-10) << preset << " " << dtype;
      EXPECT_LT(max_abs, 1e-4) << preset << " " << dtype;
    }
}

// ---- the recurrent state ----

TEST(HybridModel, DecodeOneTokenAtATimeAndChunkedPrefillEqualOnePrefill) {
  for (const char* preset : {"hybrid-tiny", "mamba-tiny"})
    for (const char* backend : {"cpu_ref", "cpu_onednn"}) {
      SCOPED_TRACE(std::string(preset) + " " + backend);
      Loaded m(model_file(preset, "f32"), backend);
      const auto toks = sample_tokens(35, int(m.V()), 1);  // crosses two KV block boundaries
      const auto full = m.run(toks);
      // 10 tokens of prefill, then one at a time through the state and the cache.
      std::vector<uint32_t> decode = {10};
      decode.resize(26, 1);
      EXPECT_LT(nmse(m.run(toks, decode), widen(full)), 1e-10);
      EXPECT_LT(nmse(m.run(toks, {7, 17}), widen(full)), 1e-10);   // 3 chunks: 7, 17, 11
      EXPECT_LT(nmse(m.run(toks, {16, 16}), widen(full)), 1e-10);  // chunk ends on a block edge
    }
}

TEST(HybridModel, BatchedSequencesInTheirOwnSlotsEqualSingleRuns) {
  for (const char* backend : {"cpu_ref", "cpu_onednn"}) {
    Loaded m(model_file("hybrid-tiny", "f32"), backend);
    const uint32_t V = m.V();
    std::vector<std::vector<int32_t>> seqs = {sample_tokens(7, V, 1), sample_tokens(19, V, 2),
                                              sample_tokens(9, V, 3)};
    std::vector<std::vector<float>> alone;
    for (const auto& s : seqs) alone.push_back(m.run(s, {}, 0));
    // Prefill all three in one forward (slots 2, 0, 3), then decode 4 tokens each, batched.
    std::vector<std::vector<int32_t>> blocks(3);
    const int32_t slots[3] = {2, 0, 3};
    std::vector<sy::model::SeqInput> in;
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_TRUE(m.cache->pool().allocate(m.cache->blocks_for(seqs[i].size()), blocks[i]));
      in.push_back({seqs[i].data(), uint32_t(seqs[i].size()) - 4, 0, &blocks[i], true, slots[i]});
    }
    auto out = m.model->forward(in, *m.cache);
    for (size_t i = 0; i < 3; ++i)
      EXPECT_LT(nmse(row(out, i, V), widen(row(alone[i], seqs[i].size() - 5, V))), 1e-10)
          << backend << " prefill " << i;
    for (uint32_t d = 4; d > 0; --d) {
      for (size_t i = 0; i < 3; ++i) {
        const uint32_t p = uint32_t(seqs[i].size()) - d;
        in[i] = {&seqs[i][p], 1, p, &blocks[i], true, slots[i]};
      }
      out = m.model->forward(in, *m.cache);
      for (size_t i = 0; i < 3; ++i)
        EXPECT_LT(nmse(row(out, i, V), widen(row(alone[i], seqs[i].size() - d, V))), 1e-10)
            << backend << " seq " << i << " decode at " << seqs[i].size() - d;
    }
  }
}

// A slot's next owner (pos0 == 0) starts from a zero state: running B after A in the same slot
// equals B in a fresh model, including after a partial run (a preempted request's recompute).
TEST(HybridModel, StateResetsWhenASequenceStartsAtPositionZero) {
  Loaded m(model_file("hybrid-tiny", "f32"), "cpu_ref");
  const auto a = sample_tokens(12, int(m.V()), 4), b = sample_tokens(9, int(m.V()), 5);
  const auto fresh = m.run(b, {}, 1);
  m.run(a, {5, 5}, 1);
  EXPECT_EQ(m.run(b, {}, 1), fresh);
  m.run(std::vector<int32_t>(b.begin(), b.begin() + 4), {}, 1);  // preempted after 4 tokens
  EXPECT_EQ(m.run(b, {}, 1), fresh);                             // recomputed from scratch
}

TEST(HybridModel, RefusesMissingOrSharedStateSlots) {
  Loaded m(model_file("mamba-tiny", "f32"), "cpu_ref", 2);
  const auto t = sample_tokens(3, int(m.V()));
  std::vector<int32_t> b0, b1;
  auto expect_error = [&](std::vector<sy::model::SeqInput> in, const std::string& msg) {
    try {
      m.model->forward(in, *m.cache);
      ADD_FAILURE() << "no error";
    } catch (const sy::Bug& e) {
      EXPECT_EQ(std::string(e.what()), msg);
    }
  };
  expect_error({{t.data(), 3, 0, &b0, true, -1}},
               "forward: state_slot -1 outside the 2 reserved recurrent-state slots");
  expect_error({{t.data(), 3, 0, &b0, true, 2}},
               "forward: state_slot 2 outside the 2 reserved recurrent-state slots");
  expect_error({{t.data(), 3, 0, &b0, true, 1}, {t.data(), 3, 0, &b1, true, 1}},
               "forward: two sequences share state_slot 1");
}

TEST(HybridModel, InfoReportsLayersStateAndActiveParameters) {
  Loaded m(model_file("hybrid-tiny", "f32"), "cpu_ref", 3);
  const auto& hp = static_cast<const sy::model::DecoderModel&>(*m.model).hparams();
  const auto& info = m.model->info();
  const auto shape = sy::model::preset_shape("hybrid-tiny");
  EXPECT_EQ(info.arch, "jamba");
  EXPECT_EQ(info.n_attn_layers, 2u);      // layers 1 and 3
  EXPECT_EQ(info.kv_row_width, 16u * 2);  // head_dim 16, 2 KV heads
  // 2 Mamba layers x ((d_conv - 1) * d_inner + d_state * d_inner) floats
  EXPECT_EQ(info.state_bytes_per_seq, 2u * (3 * 128 + 16 * 128) * 4);
  EXPECT_EQ(m.model->state_bytes_allocated(), 3 * info.state_bytes_per_seq);
  EXPECT_EQ(info.n_params, sy::model::count_params(shape));
  EXPECT_EQ(info.n_active_params, sy::model::count_active_params(shape));
  EXPECT_LT(info.n_active_params, info.n_params);
  EXPECT_EQ(hp.recurrent(), (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(hp.moe(), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(info.n_expert, 4u);
  EXPECT_EQ(info.n_expert_used, 2u);

  Loaded mm(model_file("mamba-tiny", "f32"), "cpu_ref");
  EXPECT_EQ(mm.model->info().n_attn_layers, 0u);
  EXPECT_EQ(mm.cache->bytes(), 0u);  // no attention layer: the KV cache holds nothing
  EXPECT_EQ(mm.model->info().n_params,
            sy::model::count_params(sy::model::preset_shape("mamba-tiny")));
}

// ---- MoE: the light path's n_expert_used and the activation counters ----

TEST(HybridModel, ExpertsPerTokenOverrideChangesTheActiveExperts) {
  for (const char* preset : {"hybrid-tiny", "moe-tiny"}) {
    SCOPED_TRACE(preset);
    Loaded m(model_file(preset, "f32"), "cpu_ref");
    sy::test::NaiveHybrid ref(*m.file);
    const auto toks = sample_tokens(11, int(m.V()), 6);
    const std::vector<int> itoks(toks.begin(), toks.end());
    const auto def = m.run(toks);
    EXPECT_EQ(m.run(toks, {}, 0, 2), def);  // 2 is the files' expert_used_count
    const auto light = m.run(toks, {}, 0, 1);
    EXPECT_GT(nmse(light, widen(def)), 1e-4);  // really fewer experts
    const auto want1 = ref.logits(itoks, 1);
    for (size_t t = 0; t < toks.size(); ++t) EXPECT_LT(nmse(row(light, t, m.V()), want1[t]), 1e-9);
    // A heavier request (all 4 experts) is allowed too; 5 is not.
    const auto all = m.run(toks, {}, 0, 4);
    const auto want4 = ref.logits(itoks, 4);
    for (size_t t = 0; t < toks.size(); ++t) EXPECT_LT(nmse(row(all, t, m.V()), want4[t]), 1e-9);
    std::vector<int32_t> blocks;
    ASSERT_TRUE(m.cache->pool().allocate(1, blocks));
    sy::model::SeqInput bad{toks.data(), 2, 0, &blocks, true, 0, 5};
    EXPECT_THROW(m.model->forward({bad}, *m.cache), sy::Error);
  }
}

TEST(HybridModel, BatchMixingLightAndFullRequestsEqualsEachAlone) {
  Loaded m(model_file("hybrid-tiny", "f32"), "cpu_onednn");
  const uint32_t V = m.V();
  const auto a = sample_tokens(9, V, 7), b = sample_tokens(6, V, 8), c = sample_tokens(5, V, 9);
  const auto ra = m.run(a, {}, 0, 1), rb = m.run(b, {}, 0, 0), rc = m.run(c, {}, 0, 1);
  std::vector<int32_t> ba, bb, bc;
  for (auto* bl : {&ba, &bb, &bc}) ASSERT_TRUE(m.cache->pool().allocate(1, *bl));
  const auto out = m.model->forward({{a.data(), 9, 0, &ba, true, 0, 1},
                                     {b.data(), 6, 0, &bb, true, 1, 0},
                                     {c.data(), 5, 0, &bc, true, 2, 1}},
                                    *m.cache);
  EXPECT_LT(nmse(row(out, 0, V), widen(row(ra, 8, V))), 1e-10);
  EXPECT_LT(nmse(row(out, 1, V), widen(row(rb, 5, V))), 1e-10);
  EXPECT_LT(nmse(row(out, 2, V), widen(row(rc, 4, V))), 1e-10);
}

TEST(HybridModel, CountsExpertActivationsPerLayer) {
  Loaded m(model_file("hybrid-tiny", "f32"), "cpu_ref");
  const auto before = sy::host_counters();
  auto delta = [&](const std::string& name) {
    const auto now = sy::host_counters();
    auto it = now.find(name), ib = before.find(name);
    return (it == now.end() ? 0 : it->second) - (ib == before.end() ? 0 : ib->second);
  };
  const auto toks = sample_tokens(10, int(m.V()), 10);
  m.run(toks, {4});                  // 10 tokens x 2 experts
  m.run(toks, {}, 0, 1);             // 10 tokens x 1 expert
  for (uint32_t layer : {0u, 3u}) {  // the MoE layers
    double sum = 0;
    for (int e = 0; e < 4; ++e)
      sum += delta("expert_activations." + std::to_string(layer) + "." + std::to_string(e));
    EXPECT_EQ(sum, 30.0) << "layer " << layer;
  }
  for (int e = 0; e < 4; ++e) EXPECT_EQ(delta("expert_activations.1." + std::to_string(e)), 0.0);
  // Distinct experts each step read: a one-token step reads exactly its top-2.
  const double loads0 = delta("expert_loads.0"), loads3 = delta("expert_loads.3");
  EXPECT_GE(loads0, 2 + 2 + 1);  // steps of 4, 6 and 10 tokens read at least k experts each
  EXPECT_LE(loads0, 4 * 3);
  m.run(std::vector<int32_t>(toks.begin(), toks.begin() + 1));
  EXPECT_EQ(delta("expert_loads.0") - loads0, 2.0);
  EXPECT_EQ(delta("expert_loads.3") - loads3, 2.0);
  EXPECT_EQ(delta("expert_loads.1"), 0.0);
}

// ---- load-time refusal ----

TEST(HybridModel, RefusesABackendWithoutTheHybridOpsNamingThem) {
  auto file = sy::gguf::File::open(model_file("hybrid-tiny", "f32"));
  sy::Backend b(host().load(SY_PLUGIN_BACKEND, "ref_no_hybrid"), {});
  try {
    sy::model::load_model(*file, b);
    FAIL() << "loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "backend ref_no_hybrid lacks ops the jamba model needs: ssm_conv, "
              "ssm_scan, moe_gate, moe_matmul, moe_combine");
  }
  auto moe = sy::gguf::File::open(model_file("moe-tiny", "f32"));
  try {
    sy::model::load_model(*moe, b);
    FAIL() << "loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "backend ref_no_hybrid lacks ops the llama model needs: moe_gate, moe_matmul, moe_combine");
  }
  // A dense llama model needs none of them.
  auto dense_path =
      fs::path(testing::TempDir()) / ("sy-hybrid-dense-" + std::to_string(::getpid()) + ".gguf");
  sy::model::write_random_model(sy::model::preset_shape("dense-tiny"), "f32", 1, dense_path);
  auto dense = sy::gguf::File::open(dense_path);
  EXPECT_NO_THROW(sy::model::load_model(*dense, b));
}
