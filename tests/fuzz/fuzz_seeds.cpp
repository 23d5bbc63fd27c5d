// Writes slim copies of GGUF files for the fuzz seed corpus: every metadata key kept, arrays cut
// to their first 512 elements (vocabularies stay loadable), tensors dropped, so each seed is a
// few kB to tens of kB and the fuzzer mutates structure instead of megabytes of weights.
// Usage: fuzz_seeds OUT_DIR FILE.gguf...
#include <cstdio>
#include <filesystem>

#include "gguf/gguf.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fuzz_seeds OUT_DIR FILE.gguf...\n");
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
