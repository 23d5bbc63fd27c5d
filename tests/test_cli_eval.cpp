// `switchyard eval` end to end: the logits file has n_prompt rows of n_vocab little-endian
// floats equal to an in-process forward of the same tokens, the greedy ids are the in-process
// argmax chain, and bad token lists are refused with the exact message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "tiny_model.h"

namespace fs = std::filesystem;

namespace {

struct CliRun {
  int rc = -1;
  std::string out;  // stdout and stderr
};

CliRun run(const std::string& args) {
  CliRun r;
  const std::string cmd = std::string(SWITCHYARD_BIN) + " eval " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  const int st = pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

const std::vector<int32_t> kPrompt = {1, 40, 7, 200, 13, 99, 3};

TEST(CliEval, LogitsFileAndGreedyIdsMatchAnInProcessForward) {
  const fs::path model = sy::test::model_file("f32");
  const fs::path out = fs::path(testing::TempDir()) / "sy-eval-logits.f32";
  fs::remove(out);
  const CliRun r =
      run(model.string() + " --tokens 1,40,7,200,13,99,3 --backend cpu_ref --greedy 5 " +
          "--logits-out " + out.string());
  ASSERT_EQ(r.rc, 0) << r.out;

  sy::test::Loaded m(model, "cpu_ref");
  const uint32_t V = m.model->info().n_vocab;
  const std::vector<float> want = m.prefill(kPrompt);
  ASSERT_EQ(fs::file_size(out), kPrompt.size() * V * sizeof(float));
  std::vector<float> got(want.size());
  std::ifstream(out, std::ios::binary).read(reinterpret_cast<char*>(got.data()), got.size() * 4);
  EXPECT_EQ(got, want);  // same backend, same ops: the same bits

  // Greedy: the argmax of the last row, then one token at a time through the cache.
  std::vector<int32_t> blocks;
  ASSERT_TRUE(m.cache->pool().allocate(m.cache->blocks_for(kPrompt.size() + 5), blocks));
  sy::model::SeqInput in{kPrompt.data(), uint32_t(kPrompt.size()), 0, &blocks, true};
  std::vector<float> row = m.model->forward({in}, *m.cache);
  std::string greedy = "greedy:";
  for (int i = 0; i < 5; ++i) {
    int32_t tok = int32_t(std::max_element(row.begin(), row.end()) - row.begin());
    greedy += " " + std::to_string(tok);
    sy::model::SeqInput d{&tok, 1, uint32_t(kPrompt.size() + i), &blocks, true};
    row = m.model->forward({d}, *m.cache);
  }
  EXPECT_NE(r.out.find("eval: llama, 7 tokens, " + std::to_string(V) +
                       " logits per position on cpu_ref, written to " + out.string() + "\n" +
                       greedy + "\n"),
            std::string::npos)
      << r.out;
}

TEST(CliEval, RefusesBadTokenLists) {
  const std::string model = sy::test::model_file("f32").string();
  CliRun r = run(model + " --tokens 1,x,3");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "switchyard eval: --tokens: 'x' is not a token id\n");
  r = run(model + " --tokens 1,99999 --backend cpu_ref");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "switchyard eval: error: forward: token id 99999 outside the vocab\n");
  r = run(model);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "switchyard eval: --tokens is required\n");
}

}  // namespace
