// switchyard tokenize: a text's token ids under a GGUF file's own vocabulary, on one line.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/args.h"
#include "cli/commands.h"
#include "gguf/gguf.h"
#include "text/tokenizer.h"

namespace sy::cli {

int cmd_tokenize(int argc, char** argv) {
  Args a(argc, argv, 2, {"text", "file"}, {"help", "bos", "special"});
  constexpr const char* kUsage =
      "usage: switchyard tokenize MODEL.gguf (--text T | --file F) [--bos] [--special]\n"
      "  prints the token ids of the text (or of the file's bytes), space separated\n"
      "  --bos      prepend the BOS token\n"
      "  --special  control tokens written in the text (<|eot_id|>) become their ids\n";
  if (a.has("help")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (a.positional().size() != 1) throw UsageError("expected one GGUF file");
  if (a.has("text") == a.has("file")) throw UsageError("give exactly one of --text T or --file F");
  std::string text = a.str("text");
  if (a.has("file")) {
    std::ifstream in(a.str("file"), std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + a.str("file"));
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  const auto file = gguf::File::open(a.positional()[0]);
  const auto tok = text::Tokenizer::from_gguf(*file);
  const auto ids = text::tokenize(*tok, text, {a.has("bos"), a.has("special")});
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) line += (i ? " " : "") + std::to_string(ids[i]);
  std::printf("%s\n", line.c_str());
  return 0;
}

}  // namespace sy::cli
