// Config errors name the file, the line and the key.
#include <gtest/gtest.h>

#include <fstream>

#include "config/config.h"
#include "engine/model_file.h"
#include "gguf/gguf.h"
#include "modelgen/generate_hook.h"
#include "modelgen/shape_file.h"

using sy::ConfigError;
using sy::parse_config;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_config(text, "bad.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "parsed";
}

const char* kGood = R"([model]
path = "m.gguf"
generate = "dense-tiny"
dtype = "q8_0"

[backend]
plugin = "cpu_onednn"
threads = 2

[scheduler]
plugin = "fixed_window"
max_batch = 8
wait_window_ms = 2.5
greedy = true

[engine]
kv_block_size = 32
max_seqs = 4

[sampling]
temperature = 0.7
top_k = 40
)";

}  // namespace

TEST(Config, ParsesEverySection) {
  const sy::Config c = parse_config(kGood, "good.toml");
  EXPECT_EQ(c.model.path, "m.gguf");
  EXPECT_EQ(c.model.generate, "dense-tiny");
  EXPECT_EQ(c.model.dtype, "q8_0");
  EXPECT_EQ(c.backend.plugin, "cpu_onednn");
  EXPECT_EQ(c.backend.params, (sy::Params{{"threads", "2"}}));
  EXPECT_EQ(c.scheduler.plugin, "fixed_window");
  EXPECT_EQ(c.scheduler.params,
            (sy::Params{
                {"greedy", "true"}, {"max_batch", "8"}, {"wait_window_ms", "2.5"}}));  // key order
  EXPECT_EQ(c.engine.kv_block_size, 32u);
  EXPECT_EQ(c.engine.max_seqs, 4u);
  EXPECT_FLOAT_EQ(c.sampling.temperature, 0.7f);
  EXPECT_EQ(c.sampling.top_k, 40);
}

TEST(Config, SyntaxErrorNamesFileLineAndColumn) {
  const std::string e = error_of("[model]\npath = \"m.gguf\"\nseed = = 3\n");
  EXPECT_EQ(e.rfind("bad.toml:3:", 0), 0u) << e;
  EXPECT_NE(e.find("syntax error"), std::string::npos) << e;
}

TEST(Config, WrongTypeNamesTheKeyAndLine) {
  EXPECT_EQ(
      error_of("[model]\npath = \"m\"\n[backend]\nplugin = \"b\"\n[scheduler]\nplugin = \"s\"\n"
               "[engine]\nmax_seqs = \"many\"\n"),
      "bad.toml:8:12: engine.max_seqs: expected an integer, got string");
  EXPECT_EQ(error_of("[model]\npath = 3\n"),
            "bad.toml:2:8: model.path: expected a string, got integer");
}

TEST(Config, MissingAndUnknownKeys) {
  EXPECT_EQ(error_of("[model]\ngenerate = \"dense-tiny\"\n"),
            "bad.toml:1:1: model.path: required key is missing");
  EXPECT_EQ(error_of("[model]\npath = \"m\"\n"),
            "bad.toml:1:1: backend: required table [backend] is missing");
  EXPECT_EQ(error_of("[model]\npath = \"m\"\npaht = \"x\"\n"),
            "bad.toml:3:1: model.paht: unknown key");
  EXPECT_EQ(
      error_of("[model]\npath = \"m\"\n[backend]\nplugin = \"b\"\n[scheduler]\nplugin = \"s\"\n"
               "[engin]\nmax_seqs = 3\n"),
      "bad.toml:7:2: engin: unknown key");
}

TEST(Config, RangeAndEnumChecks) {
  const std::string base =
      "[model]\npath = \"m\"\n[backend]\nplugin = \"b\"\n[scheduler]\nplugin = \"s\"\n";
  EXPECT_EQ(error_of(base + "[sampling]\ntop_p = 1.5\n"),
            "bad.toml:8:9: sampling.top_p: must be in [0, 1], got 1.5");
  EXPECT_EQ(error_of(base + "[engine]\nkv_block_size = 0\n"),
            "bad.toml:8:17: engine.kv_block_size: must be in [1, 4096], got 0");
  EXPECT_EQ(error_of(base + "[engine]\noverlap = 1\n"),
            "bad.toml:8:11: engine.overlap: expected a boolean, got integer");
  EXPECT_EQ(error_of(base + "[engine]\nkv_dtype = \"bf16\"\n"),
            "bad.toml:8:12: engine.kv_dtype: must be one of \"f32\", \"f16\", got 'bf16'");
  EXPECT_EQ(error_of(base + "[engine]\nkv_dtype = 16\n"),
            "bad.toml:8:12: engine.kv_dtype: expected a string, got integer");
  EXPECT_EQ(sy::parse_config(base + "[engine]\nkv_dtype = \"f16\"\n", "ok.toml").engine.kv_dtype,
            (uint32_t)SY_DTYPE_F16);
  EXPECT_EQ(sy::parse_config(base, "ok.toml").engine.kv_dtype, (uint32_t)SY_DTYPE_F32);
  EXPECT_EQ(error_of(base + "[engine]\nswa_cache = \"ring\"\n"),
            "bad.toml:8:13: engine.swa_cache: must be one of \"window\", \"full\", got 'ring'");
  EXPECT_EQ(sy::parse_config(base, "ok.toml").engine.swa_cache, "window");
  EXPECT_EQ(sy::parse_config(base + "[engine]\nswa_cache = \"full\"\n", "ok.toml").engine.swa_cache,
            "full");
  EXPECT_EQ(
      error_of("[model]\npath = \"m\"\ndtype = \"q4\"\n"),
      "bad.toml:3:9: model.dtype: must be one of f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, "
      "q2_k, q3_k_s, q3_k_m, q3_k_l, q4_k_s, q4_k_m, q5_k_s, q5_k_m, q6_k, iq4_nl, iq4_xs, "
      "mxfp4_moe, "
      "got 'q4'");
  EXPECT_EQ(error_of("[model]\npath = \"m\"\npure = \"yes\"\n"),
            "bad.toml:3:8: model.pure: expected a boolean, got string");
  std::string pure = kGood;
  EXPECT_FALSE(sy::parse_config(pure, "ok.toml").model.pure);
  pure.insert(pure.find("dtype"), "pure = true\n");
  EXPECT_TRUE(sy::parse_config(pure, "ok.toml").model.pure);
  EXPECT_EQ(error_of(base + "[scheduler.extra]\nx = 1\n"),
            "bad.toml:7:1: scheduler.extra: plugin parameters must be scalars, got table");
}

TEST(Config, LoadConfigNamesAMissingFile) {
  try {
    sy::load_config("/nonexistent/dir/x.toml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/dir/x.toml: cannot open file");
  }
}

TEST(Config, ShippedConfigsParse) {
  for (const char* f : {"configs/dense.toml", "configs/optimized.toml"}) {
    const sy::Config c = sy::load_config(std::string(SWITCHYARD_SOURCE_DIR) + "/" + f);
    EXPECT_FALSE(c.model.path.empty()) << f;
  }
}

TEST(Config, ShapeFromToml) {
  const std::string path = testing::TempDir() + "/shape.toml";
  std::ofstream(path) << "preset = \"dense-small\"\nn_layer = 3\ntied_output = true\n";
  const auto s = sy::load_shape(path);
  EXPECT_EQ(s.n_layer, 3u);
  EXPECT_EQ(s.n_embd, 256u);
  EXPECT_TRUE(s.tied_output);
  std::ofstream(path)
      << "preset = \"hybrid-tiny\"\nn_layer = 8\nattn_layer_period = 4\nattn_layer_offset = 2\n"
         "n_expert = 8\nn_expert_used = 2\nexpert_layer_offset = 1\nexpert_layer_period = 2\n"
         "ssm_d_state = 8\n";
  const auto h = sy::load_shape(path);
  EXPECT_EQ(h.arch, "jamba");
  EXPECT_EQ(h.n_expert, 8u);
  EXPECT_EQ(h.ssm_d_state, 8u);
  std::vector<bool> attn, moe;
  for (uint32_t l = 0; l < h.n_layer; ++l)
    attn.push_back(h.is_attention_layer(l)), moe.push_back(h.is_moe_layer(l));
  EXPECT_EQ(attn, (std::vector<bool>{false, false, true, false, false, false, true, false}));
  EXPECT_EQ(moe, (std::vector<bool>{false, true, false, true, false, true, false, true}));
  std::ofstream(path) << "arch = \"gpt2\"\n";
  try {
    sy::load_shape(path);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":1:8: arch: must be one of " +
                                         sy::model::generated_archs() + ", got \"gpt2\"");
  }
  std::ofstream(path) << "n_layers = 3\n";
  try {
    sy::load_shape(path);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":1:1: n_layers: unknown key");
  }
}

// `[model] generate` writes a missing model only through the maker the program registered: the
// engine alone refuses, naming the config, the file and why.
TEST(Config, GenerateGoesThroughTheRegisteredMaker) {
  const auto dir = std::filesystem::temp_directory_path() / "sy-config-generate-hook";
  std::filesystem::remove_all(dir);
  sy::ModelConfig m;
  m.path = (dir / "tiny.gguf").string();
  m.generate = "dense-tiny";
  sy::engine::set_model_file_maker(nullptr);
  try {
    sy::engine::ensure_model_file(m, dir, "c.toml");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "c.toml: model.generate: " + m.path +
                  " is missing and this program cannot write models (no model generator "
                  "registered)");
  }
  EXPECT_FALSE(std::filesystem::exists(m.path));
  sy::modelgen::install_generate_hook();
  sy::engine::ensure_model_file(m, dir, "c.toml");
  const auto f = sy::gguf::File::open(m.path);
  EXPECT_EQ(f->tensors().size(), 21u);  // dense-tiny: embedding, 2 x 9 layer tensors, norm, output
  std::filesystem::remove_all(dir);
}
