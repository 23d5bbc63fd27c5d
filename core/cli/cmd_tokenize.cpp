// switchyard tokenize: a text's token ids under a GGUF file's own vocabulary, on one line.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "cli/options.h"
#include "gguf/gguf.h"
#include "switchyard/common/error.h"
#include "text/tokenizer.h"

namespace sy::cli {

int cmd_tokenize(int argc, char** argv) {
  Command app("tokenize",
              "Prints the token ids of the text (or of the file's bytes), space "
              "separated, under the GGUF file's own vocabulary.");
  std::string model_path, text, text_file;
  bool bos = false, special = false;
  app.add_option("model", model_path, "the GGUF file");
  app.add_option("--text", text, "the text");
  app.add_option("--file", text_file, "a file whose bytes are the text");
  app.add_flag("--bos", bos, "prepend the BOS token");
  app.add_flag("--special", special,
               "control tokens written in the text (<|eot_id|>) become their ids");
  if (!parse(app, argc, argv)) return 0;
  if (model_path.empty()) throw UsageError("expected one GGUF file");
  if (app.count("--text") == app.count("--file"))
    throw UsageError("give exactly one of --text T or --file F");
  if (app.count("--file")) {
    std::ifstream in(text_file, std::ios::binary);
    if (!in) throw sy::Error(SY_ERR_NOT_FOUND, "cannot read " + text_file);
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  const auto file = gguf::File::open(model_path);
  const auto tok = text::Tokenizer::from_gguf(*file);
  const auto ids = text::tokenize(*tok, text, {bos, special});
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) line += (i ? " " : "") + std::to_string(ids[i]);
  std::printf("%s\n", line.c_str());
  return 0;
}

}  // namespace sy::cli
