// `switchyard apply-template` as a user runs it: every conversation of the reference chat folder
// (../shared/ggml-reference/chat, rendered by Hugging Face's own Jinja renderer) comes out
// byte-exact, from the template file and from a GGUF file that carries the template (its
// vocabulary giving the special-token strings); template and conversation errors name the
// template line or the field.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gguf/gguf.h"
#include "gguf_copy.h"
#include "vocab_reference.h"

namespace {

namespace fs = std::filesystem;

struct CliResult {
  int rc;
  std::string out, err;
};

CliResult run(const std::string& args) {
  const fs::path err = fs::path(testing::TempDir()) / "sy-apply-template.err";
  const std::string cmd =
      std::string(SWITCHYARD_CLI) + " apply-template " + args + " 2>" + err.string();
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "", "popen failed"};
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  std::ifstream e(err);
  std::stringstream ss;
  ss << e.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, ss.str()};
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path chat_dir() {
  return sy::test::vocab_reference_dir().parent_path() / "chat";
}

// The reference conversations of one model folder: (json, expected render).
std::vector<std::pair<fs::path, fs::path>> conversations(const std::string& model) {
  std::vector<std::pair<fs::path, fs::path>> out;
  for (const auto& e : fs::directory_iterator(chat_dir() / model)) {
    const fs::path p = e.path();
    if (p.extension() != ".json") continue;
    out.emplace_back(p, fs::path(p).replace_extension(".txt"));
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CliApplyTemplate, EveryReferenceConversationIsByteExact) {
  if (!fs::exists(chat_dir())) GTEST_SKIP() << "no reference data at " << chat_dir();
  size_t exact = 0, total = 0;
  for (const std::string model : {"llama3", "qwen3"}) {
    for (const auto& [json, txt] : conversations(model)) {
      ++total;
      const CliResult r =
          run("--template " + (chat_dir() / model / "chat_template.jinja").string() +
              " --conversation " + json.string());
      ASSERT_EQ(r.rc, 0) << json << ": " << r.err;
      if (r.out == slurp(txt))
        ++exact;
      else
        ADD_FAILURE() << json << ":\n got: [" << r.out << "]\nwant: [" << slurp(txt) << "]";
    }
  }
  EXPECT_EQ(total, 13u);
  EXPECT_EQ(exact, total);
}

// The template from the file's tokenizer.chat_template, the special-token strings from its
// vocabulary when the conversation gives none.
TEST(CliApplyTemplate, TakesTheTemplateAndSpecialTokensFromTheGgufFile) {
  if (!fs::exists(chat_dir())) GTEST_SKIP() << "no reference data at " << chat_dir();
  const fs::path vocab = sy::test::vocab_reference_dir() / "ggml-vocab-llama-bpe.gguf";
  const auto file = sy::gguf::File::open(vocab);
  sy::gguf::Writer w = sy::test::copy_gguf(*file);
  w.set("tokenizer.chat_template",
        sy::gguf::Value::of_str(slurp(chat_dir() / "llama3" / "chat_template.jinja")));
  const fs::path model = fs::path(testing::TempDir()) / "sy-llama3-chat.gguf";
  w.write(model);
  // The conversation without its special_tokens: <|begin_of_text|> must come from the vocabulary.
  std::string conv = slurp(chat_dir() / "llama3" / "03-multi-turn.json");
  const size_t at = conv.find("\"special_tokens\"");
  ASSERT_NE(at, std::string::npos);
  conv.replace(at, conv.find('}', at) + 1 - at, "\"special_tokens\": null");
  const fs::path c = fs::path(testing::TempDir()) / "sy-conv.json";
  std::ofstream(c, std::ios::binary) << conv;
  const CliResult r = run(model.string() + " --conversation " + c.string());
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, slurp(chat_dir() / "llama3" / "03-multi-turn.txt"));
}

TEST(CliApplyTemplate, ErrorsNameTheTemplateLineOrTheField) {
  const fs::path dir = fs::path(testing::TempDir());
  const fs::path conv = dir / "sy-conv-ok.json";
  std::ofstream(conv) << R"({"messages": [{"role": "tool", "content": "x"}]})";
  const fs::path t = dir / "sy-raise.jinja";
  std::ofstream(t) << "{% for m in messages %}\n{% if m.role == 'tool' %}\n"
                      "{{ raise_exception('Conversation roles must alternate') }}\n"
                      "{% endif %}{% endfor %}";
  CliResult r = run("--template " + t.string() + " --conversation " + conv.string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("template line 3: Conversation roles must alternate"), std::string::npos)
      << r.err;

  std::ofstream(t, std::ios::trunc)
      << "{% for m in messages %}\n{{ m.content | nosuch }}{% endfor %}";
  r = run("--template " + t.string() + " --conversation " + conv.string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("template line 2: no filter named 'nosuch'"), std::string::npos) << r.err;

  std::ofstream(t, std::ios::trunc) << "{% if true %}\nunclosed";
  r = run("--template " + t.string() + " --conversation " + conv.string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(
      r.err.find("template line 2: unexpected end of template, expected elif or else or endif"),
      std::string::npos)
      << r.err;

  std::ofstream(conv, std::ios::trunc) << R"({"messages": {"role": "user"}})";
  r = run("--template " + t.string() + " --conversation " + conv.string());
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find(conv.string() + ": messages: expected an array"), std::string::npos)
      << r.err;

  r = run("--conversation " + conv.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("give exactly one of a GGUF file or --template T.jinja"), std::string::npos)
      << r.err;
}

}  // namespace
