// `switchyard tokenize` as a user runs it: every test string of llama.cpp's seven reference
// vocabularies gives exactly the reference ids through the CLI (--file, no BOS, no special
// parsing), and --text, --bos, --special and the refusals behave as documented.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "gguf/gguf.h"
#include "vocab_reference.h"

namespace {

namespace fs = std::filesystem;
using sy::test::vocab_reference_dir;

struct CliResult {
  int rc;
  std::string out;  // stdout and stderr
};

CliResult run(const std::string& args) {
  const std::string cmd = std::string(SWITCHYARD_CLI) + " tokenize " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string vocab(const std::string& name) {
  return (vocab_reference_dir() / ("ggml-vocab-" + name + ".gguf")).string();
}

bool have_reference() {
  return fs::exists(vocab("gpt-2"));
}

class CliReferenceVocab : public testing::TestWithParam<std::string> {};

TEST_P(CliReferenceVocab, EveryTestStringExact) {
  if (!have_reference()) GTEST_SKIP() << "no reference data at " << vocab_reference_dir();
  const auto cases = sy::test::vocab_cases(GetParam());
  ASSERT_EQ(cases.size(), 46u);
  const fs::path f = fs::path(testing::TempDir()) / ("sy-cli-tok-" + GetParam() + ".txt");
  size_t exact = 0;
  for (const auto& c : cases) {
    std::ofstream(f, std::ios::binary) << c.text;
    const CliResult r = run(vocab(GetParam()) + " --file " + f.string());
    ASSERT_EQ(r.rc, 0) << r.out;
    // One line of space-separated ids; the reference writes a space before each.
    const std::string line = r.out.substr(0, r.out.find('\n'));
    if ((line.empty() ? "" : " " + line) == c.ids)
      ++exact;
    else
      ADD_FAILURE() << GetParam() << ": [" << c.text << "]\n got: " << line << "\nwant:" << c.ids;
  }
  std::printf("%s: %zu/%zu strings exact through the CLI\n", GetParam().c_str(), exact,
              cases.size());
  EXPECT_EQ(exact, cases.size());
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, CliReferenceVocab,
                         testing::ValuesIn(sy::test::reference_vocabs()), [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(CliTokenize, FlagsAndRefusals) {
  if (!have_reference()) GTEST_SKIP() << "no reference data";
  const std::string phi3 = vocab("phi-3");
  // phi-3 ids: <s> 1, <|user|> 32010; "Hi" -> "▁Hi" 6324.
  EXPECT_EQ(run(phi3 + " --text Hi").out, "6324\n");
  EXPECT_EQ(run(phi3 + " --text Hi --bos").out, "1 6324\n");
  EXPECT_EQ(run(phi3 + " --text '<|user|>Hi' --special").out, "32010 6324\n");
  const CliResult plain = run(phi3 + " --text '<|user|>Hi'");
  EXPECT_EQ(plain.out.find("32010"), std::string::npos) << "control token parsed without --special";
  EXPECT_EQ(run(phi3 + " --text ''").out, "\n");
  EXPECT_EQ(run(phi3).out, "switchyard tokenize: give exactly one of --text T or --file F\n");
  EXPECT_EQ(run(phi3).rc, 2);
  EXPECT_EQ(run(phi3 + " --text a --file b").rc, 2);
  EXPECT_EQ(run(phi3 + " --file /nonexistent/x").out,
            "switchyard tokenize: error: cannot read /nonexistent/x\n");
  EXPECT_EQ(run("--text a").out, "switchyard tokenize: expected one GGUF file\n");
  // A BPE vocabulary naming a pre-tokenizer Switchyard lacks is refused by name.
  const auto f = sy::gguf::File::open(vocab("gpt-2"));
  sy::gguf::Writer w;
  for (const auto& [k, v] : f->metadata()) w.set(k, v);
  w.set("tokenizer.ggml.pre", sy::gguf::Value::of_str("qwen9"));
  const fs::path bad = fs::path(testing::TempDir()) / "sy-vocab-qwen9.gguf";
  w.write(bad);
  const CliResult r = run(bad.string() + " --text Hi");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(
      r.out,
      "switchyard tokenize: error: tokenizer.ggml.pre: unknown pre-tokenizer type: 'qwen9'\n");
}

}  // namespace
