// Writes slim copies of GGUF files for the fuzz seed corpus: every metadata key kept, arrays cut
// to their first 512 elements (vocabularies stay loadable), tensors dropped, so each seed is a
// few kB to tens of kB and the fuzzer mutates structure instead of megabytes of weights.
// With --jinja, writes the templates of the Jinja fixtures (cases.json, real_templates.json)
// instead, one a file, a case's variables after a "#--context--" line as fuzz_jinja reads them.
// Usage: fuzz_seeds OUT_DIR FILE.gguf...
//        fuzz_seeds --jinja OUT_DIR FILE.json...
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gguf/gguf.h"

namespace {

int jinja_seeds(const std::filesystem::path& out, int n, char** files) {
  std::filesystem::create_directories(out);
  int written = 0;
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(out / name, std::ios::binary) << bytes;
    ++written;
  };
  for (int i = 0; i < n; ++i) {
    std::ifstream in(files[i]);
    const auto j = nlohmann::ordered_json::parse(in, nullptr, false);
    if (j.is_discarded()) {
      std::fprintf(stderr, "skipped %s: not JSON\n", files[i]);
      continue;
    }
    for (const auto& c : j.value("cases", nlohmann::ordered_json::array())) {
      std::string src = c.at("template").get<std::string>();
      if (!c.at("context").empty()) src += "\n#--context--\n" + c.at("context").dump();
      write("case-" + c.at("name").get<std::string>(), src);
    }
    for (const auto& t : j.value("templates", nlohmann::ordered_json::array()))
      write("real-" + t.at("source").get<std::string>(), t.at("template").get<std::string>());
  }
  std::printf("wrote %d template seeds to %s\n", written, out.c_str());
  return written > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::string(argv[1]) == "--jinja")
    return jinja_seeds(argv[2], argc - 3, argv + 3);
  if (argc < 3) {
    std::fprintf(stderr, "usage: fuzz_seeds OUT_DIR FILE.gguf... | --jinja OUT_DIR FILE.json...\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  int written = 0;
  for (int i = 2; i < argc; ++i) {
    try {
      const auto f = sy::gguf::File::open(argv[i]);
      sy::gguf::Writer w;
      for (auto [key, v] : f->metadata()) {
        if (v.type == sy::gguf::ValueType::ARRAY && v.array.size() > 512) v.array.resize(512);
        // Special-token ids past the cut would make every slim vocabulary a refusal.
        if (key.rfind("tokenizer.ggml.", 0) == 0 && key.size() > 9 &&
            key.compare(key.size() - 9, 9, "_token_id") == 0 && v.u >= 512)
          v.u = 0;
        w.set(key, std::move(v));
      }
      const auto dst = out / ("slim-" + std::filesystem::path(argv[i]).filename().string());
      w.write(dst);
      ++written;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "skipped %s: %s\n", argv[i], e.what());
    }
  }
  std::printf("wrote %d slim seeds to %s\n", written, out.c_str());
  return written > 0 ? 0 : 1;
}
