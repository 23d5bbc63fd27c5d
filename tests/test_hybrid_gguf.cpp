// Generated jamba / mamba / llama-MoE GGUFs against the documented tables in
// core/model/JAMBA-GGUF.md (parsed here, so the document and the writer cannot drift), the
// hybrid presets' parameter budgets, and the loader's handling of llama.cpp's key variants.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "gguf/gguf.h"
#include "gguf_copy.h"
#include "host/plugin_host.h"
#include "model/model.h"
#include "model/model_desc.h"
#include "modelgen/generator.h"
#include "switchyard/common/error.h"

namespace fs = std::filesystem;
using sy::model::ModelShape;

namespace {

// Rows of the markdown table whose header starts with `first_header`, cells trimmed of spaces
// and backticks.
std::vector<std::vector<std::string>> doc_table(const std::string& first_header) {
  std::ifstream in(std::string(SWITCHYARD_SOURCE_DIR) + "/core/model/JAMBA-GGUF.md");
  EXPECT_TRUE(in.good());
  std::vector<std::vector<std::string>> rows;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '|') {
      in_table = false;
      continue;
    }
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    for (std::string c; std::getline(ss, c, '|');) {
      std::string t;
      for (char ch : c)
        if (ch != '`') t += ch;
      const auto b = t.find_first_not_of(' '), e = t.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : t.substr(b, e - b + 1));
    }
    if (!in_table) {
      in_table = cells[0] == first_header;
      continue;
    }
    if (cells[0].rfind("---", 0) == 0) continue;
    rows.push_back(cells);
  }
  return rows;
}

std::map<std::string, double> symbols(const ModelShape& s) {
  return {
      {"n_embd", s.n_embd},       {"n_layer", s.n_layer},
      {"n_vocab", s.n_vocab},     {"n_ctx", s.n_ctx},
      {"n_ff", s.n_ff},           {"n_head", s.n_head},
      {"n_head_kv", s.n_head_kv}, {"n_embd_gqa", s.n_head ? s.n_embd / s.n_head * s.n_head_kv : 0},
      {"d_conv", s.ssm_d_conv},   {"d_inner", s.d_inner()},
      {"d_state", s.ssm_d_state}, {"dt_rank", s.dt_rank()},
      {"n_expert", s.n_expert},   {"n_expert_used", s.n_expert_used},
      {"eps", s.rms_eps}};
}

// Sums of products of symbols and integers: "dt_rank+2*d_state".
double eval(const std::string& expr, const std::map<std::string, double>& sym) {
  double sum = 0;
  std::stringstream terms(expr);
  for (std::string term; std::getline(terms, term, '+');) {
    double prod = 1;
    std::stringstream factors(term);
    for (std::string f; std::getline(factors, f, '*');) {
      f.erase(std::remove(f.begin(), f.end(), ' '), f.end());
      if (std::isdigit(static_cast<unsigned char>(f[0]))) {
        prod *= std::stod(f);
      } else if (sym.count(f)) {
        prod *= sym.at(f);
      } else {
        ADD_FAILURE() << "unknown symbol '" << f << "' in " << expr;
      }
    }
    sum += prod;
  }
  return sum;
}

std::vector<int64_t> shape_of(const std::string& cell, const std::map<std::string, double>& sym) {
  std::vector<int64_t> out;
  std::stringstream ss(cell.substr(1, cell.size() - 2));  // strip { }
  for (std::string d; std::getline(ss, d, ',');) out.push_back(int64_t(eval(d, sym)));
  return out;
}

fs::path write(const ModelShape& s, const std::string& dtype, const std::string& tag) {
  const fs::path p = fs::path(testing::TempDir()) /
                     ("sy-hybrid-gguf-" + tag + "-" + std::to_string(::getpid()) + ".gguf");
  sy::model::write_random_model(s, dtype, 5, p);
  return p;
}

// Every key and tensor the tables predict for this shape is in the file with that type, value,
// shape and dtype, and the file has nothing else (apart from general.* and tokenizer.* keys).
void check_against_doc(const ModelShape& s, const std::string& dtype) {
  SCOPED_TRACE(s.arch + " " + dtype);
  const fs::path p = write(s, dtype, s.arch + "-" + dtype);
  auto f = sy::gguf::File::open(p);
  const auto sym = symbols(s);
  const int col = s.arch == "jamba" ? 2 : 3;
  std::set<std::string> keys_seen;
  for (const auto& r : doc_table("key")) {
    std::string key = r[0];
    if (auto at = key.find("{arch}"); at != std::string::npos) key.replace(at, 6, s.arch);
    const std::string& want = r[col];
    const sy::gguf::Value* v = f->find(key);
    if (want == "—") {
      EXPECT_EQ(v, nullptr) << key << " should be absent";
      continue;
    }
    if (s.n_expert == 0 && key.find("expert") != std::string::npos) continue;
    ASSERT_NE(v, nullptr) << "missing key " << key;
    keys_seen.insert(key);
    const std::string& type = r[1];
    if (type == "STRING") {
      EXPECT_EQ(v->type, sy::gguf::ValueType::STRING) << key;
      EXPECT_EQ(v->s, want) << key;
    } else if (type == "UINT32") {
      EXPECT_EQ(v->type, sy::gguf::ValueType::UINT32) << key;
      EXPECT_EQ(double(v->u), eval(want, sym)) << key;
    } else if (type == "FLOAT32") {
      EXPECT_EQ(v->type, sy::gguf::ValueType::FLOAT32) << key;
      EXPECT_FLOAT_EQ(float(v->f), float(eval(want, sym))) << key;
    } else if (type == "INT32[n_layer]") {
      ASSERT_EQ(v->type, sy::gguf::ValueType::ARRAY) << key;
      EXPECT_EQ(v->array_type, sy::gguf::ValueType::INT32) << key;
      ASSERT_EQ(v->array.size(), s.n_layer) << key;
      ASSERT_EQ(want, "kv_per_layer");
      for (uint32_t l = 0; l < s.n_layer; ++l)
        EXPECT_EQ(v->array[l].i, s.is_attention_layer(l) ? int64_t(s.n_head_kv) : 0)
            << key << "[" << l << "]";
    } else {
      ADD_FAILURE() << "unknown type " << type;
    }
  }
  for (const auto& [k, v] : f->metadata()) {
    if (k.rfind("general.", 0) != 0 && k.rfind("tokenizer.", 0) != 0) {
      EXPECT_TRUE(keys_seen.count(k)) << "undocumented key " << k;
    }
  }

  const uint32_t wt = dtype == "f32" ? SY_DTYPE_F32 : dtype == "f16" ? SY_DTYPE_F16 : SY_DTYPE_Q8_0;
  std::set<std::string> expected;
  for (const auto& r : doc_table("tensor")) {
    const std::string& where = r[col + 1];  // tensor rows have a dtype column before the archs
    if (where == "—") continue;
    std::vector<std::string> names;
    if (r[0].find("blk.N.") == 0) {
      for (uint32_t l = 0; l < s.n_layer; ++l) {
        const bool ssm = !s.is_attention_layer(l), moe = s.is_moe_layer(l);
        const bool in = where == "layer" || (where == "ssm" && ssm) || (where == "attn" && !ssm) ||
                        (where == "ffn" && !moe) || (where == "moe" && moe);
        if (in) names.push_back("blk." + std::to_string(l) + "." + r[0].substr(6));
      }
    } else if (where == "all" || (where == "untied" && !s.tied_output)) {
      names.push_back(r[0]);
    }
    for (const auto& n : names) {
      expected.insert(n);
      const sy::gguf::TensorInfo* t = f->find_tensor(n);
      ASSERT_NE(t, nullptr) << "missing tensor " << n;
      const auto ne = shape_of(r[1], sym);
      ASSERT_EQ(t->n_dims, ne.size()) << n;
      for (size_t i = 0; i < ne.size(); ++i) EXPECT_EQ(t->ne[i], ne[i]) << n << " ne[" << i << "]";
      EXPECT_EQ(t->type, r[2] == "F32" ? uint32_t(SY_DTYPE_F32) : wt) << n;
    }
  }
  for (const auto& t : f->tensors())
    EXPECT_TRUE(expected.count(t.name)) << "undocumented tensor " << t.name;
  EXPECT_EQ(expected.size(), f->tensors().size());
  fs::remove(p);
}

}  // namespace

TEST(HybridGguf, GeneratedFilesMatchTheDocumentedTable) {
  check_against_doc(sy::model::preset_shape("hybrid-tiny"), "f32");
  check_against_doc(sy::model::preset_shape("hybrid-tiny"), "q8_0");
  check_against_doc(sy::model::preset_shape("mamba-tiny"), "f16");
  check_against_doc(sy::model::preset_shape("hybrid-small"), "f32");
  ModelShape tied = sy::model::preset_shape("hybrid-20m");  // tied output, 1:3 attention
  tied.n_vocab = 300, tied.n_embd = 64, tied.n_ff = 32;     // same pattern, small
  check_against_doc(tied, "f32");
  ModelShape dense_jamba = sy::model::preset_shape("hybrid-tiny");
  dense_jamba.n_expert = dense_jamba.n_expert_used = 0;  // no MoE layer at all
  check_against_doc(dense_jamba, "f32");
}

TEST(HybridGguf, MixtralStyleLlamaHasExpertKeysAndTensors) {
  const ModelShape s = sy::model::preset_shape("moe-tiny");
  const fs::path p = write(s, "f32", "moe");
  auto f = sy::gguf::File::open(p);
  EXPECT_EQ(*f->get_uint("llama.expert_count"), 4u);
  EXPECT_EQ(*f->get_uint("llama.expert_used_count"), 2u);
  for (uint32_t l = 0; l < s.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    EXPECT_EQ(f->find_tensor(b + "ffn_gate.weight"), nullptr);
    const auto* gi = f->find_tensor(b + "ffn_gate_inp.weight");
    ASSERT_NE(gi, nullptr);
    EXPECT_EQ(gi->type, uint32_t(SY_DTYPE_F32));
    for (const char* n : {"ffn_gate_exps.weight", "ffn_up_exps.weight"}) {
      const auto* t = f->find_tensor(b + n);
      ASSERT_NE(t, nullptr) << n;
      EXPECT_EQ(t->n_dims, 3u);
      EXPECT_EQ(t->ne[0], 64);
      EXPECT_EQ(t->ne[1], 64);
      EXPECT_EQ(t->ne[2], 4);
    }
    EXPECT_EQ(f->find_tensor(b + "ffn_down_exps.weight")->ne[2], 4);
  }
  uint64_t n = 0;
  for (const auto& t : f->tensors()) n += uint64_t(t.n_elements());
  EXPECT_EQ(n, sy::model::count_params(s));
  fs::remove(p);
}

// The comparison presets: hybrid-small has dense-small's total parameters, hybrid-small-active
// its active ones, and dense-20m / hybrid-20m equal totals (bench-hybrid).
TEST(HybridGguf, PresetsHaveComparableParameterCounts) {
  auto total = [](const char* p) {
    return double(sy::model::count_params(sy::model::preset_shape(p)));
  };
  auto active = [](const char* p) {
    return double(sy::model::count_active_params(sy::model::preset_shape(p)));
  };
  EXPECT_NEAR(total("hybrid-small") / total("dense-small"), 1.0, 0.03);
  EXPECT_NEAR(active("hybrid-small-active") / total("dense-small"), 1.0, 0.03);
  EXPECT_LT(active("hybrid-small"), 0.9 * total("dense-small"));
  EXPECT_NEAR(total("hybrid-20m") / total("dense-20m"), 1.0, 0.02);
  EXPECT_EQ(total("dense-small"), active("dense-small"));
  for (const char* p : {"hybrid-tiny", "mamba-tiny", "hybrid-small", "hybrid-small-active"}) {
    const fs::path path = write(sy::model::preset_shape(p), "f32", p);
    auto f = sy::gguf::File::open(path);
    uint64_t n = 0;
    for (const auto& t : f->tensors()) n += uint64_t(t.n_elements());
    EXPECT_EQ(double(n), total(p)) << p;
    fs::remove(path);
  }
  // The dense presets keep their shapes.
  const ModelShape ds = sy::model::preset_shape("dense-small");
  EXPECT_EQ(ds.arch, "llama");
  EXPECT_EQ(ds.n_embd, 256u);
  EXPECT_EQ(ds.n_layer, 4u);
  EXPECT_EQ(ds.n_ff, 704u);
  EXPECT_EQ(ds.n_expert, 0u);
}

TEST(HybridGguf, Q8NeedsWholeBlocksInEveryMatrix) {
  try {
    sy::model::write_random_model(sy::model::preset_shape("mamba-tiny"), "q8_0", 1,
                                  fs::path(testing::TempDir()) / "never.gguf");
    FAIL();
  } catch (const sy::Error& e) {
    EXPECT_EQ(std::string(e.what()), "q8_0 needs ssm_dt_rank to be a multiple of 32, it is 4");
  }
}

// llama.cpp's own random-model test writes head_count as an array too, and other writers use
// UINT32 arrays; all of them describe the same model.
TEST(HybridGguf, ReadsPerLayerArraysOfEitherIntegerTypeAndRejectsWrongLengths) {
  const ModelShape s = sy::model::preset_shape("hybrid-tiny");
  const fs::path p = write(s, "f32", "arrays");
  auto f = sy::gguf::File::open(p);
  auto rewrite = [&](const std::function<void(sy::gguf::Writer&)>& edit) {
    sy::gguf::Writer w = sy::test::copy_gguf(*f);
    edit(w);
    const auto bytes = w.to_bytes();
    auto g = sy::gguf::File::parse(bytes.data(), bytes.size(), "edited.gguf");
    return sy::model::read_model_desc(*g);
  };
  const auto base = sy::model::read_model_desc(*f);
  std::vector<sy::gguf::Value> u32, heads;
  for (uint32_t l = 0; l < s.n_layer; ++l) {
    u32.push_back(sy::gguf::Value::of_u32(s.is_attention_layer(l) ? s.n_head_kv : 0));
    heads.push_back(sy::gguf::Value::of_u32(s.is_attention_layer(l) ? s.n_head : 0));
  }
  const auto h = rewrite([&](sy::gguf::Writer& w) {
    w.set("jamba.attention.head_count_kv",
          sy::gguf::Value::of_array(sy::gguf::ValueType::UINT32, u32));
    w.set("jamba.attention.head_count",
          sy::gguf::Value::of_array(sy::gguf::ValueType::UINT32, heads));
  });
  EXPECT_EQ(h.recurrent(), base.recurrent());
  EXPECT_EQ(h.n_head, base.n_head);
  EXPECT_EQ(h.n_head_kv, base.n_head_kv);
  u32.pop_back();
  try {
    rewrite([&](sy::gguf::Writer& w) {
      w.set("jamba.attention.head_count_kv",
            sy::gguf::Value::of_array(sy::gguf::ValueType::UINT32, u32));
    });
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "edited.gguf: key jamba.attention.head_count_kv has wrong array length; expected 4, got 3");
  }
  fs::remove(p);
}
