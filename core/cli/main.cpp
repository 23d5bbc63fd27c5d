// switchyard: the command-line entry point.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli/commands.h"
#include "cli/options.h"
#include "modelgen/generate_hook.h"

namespace {

constexpr const char* kUsage =
    "usage: switchyard <command> [options]\n"
    "\n"
    "commands:\n"
    "  run [--config X.toml] [--prompt TEXT]   generate text (no config: embedded default)\n"
    "  mkmodel --out F.gguf [--preset P | --shape S.toml] [--dtype D] [--seed N] [shape flags]\n"
    "  info FILE.gguf                          print a GGUF file's metadata and tensors\n"
    "  eval FILE.gguf --tokens 1,2,3           one sequence's logits (--logits-out F), --greedy N\n"
    "  plugins [--dir D]                       list plugins found and why any was refused\n"
    "  bench-backend [--backend B]             decode/prefill tokens/s and memory-bandwidth use\n"
    "  bench-hybrid [--dense P] [--hybrid P]   dense vs hybrid (SSM + MoE): decode, prefill, "
    "memory\n"
    "  bench [--config compare.toml] [--out D] replay a workload against several variants, report\n"
    "  serve --config X.toml [--port P]        OpenAI-compatible HTTP server with hot swap\n"
    "  bench-serve [--duration S] [--clients N] load-test the server on loopback\n"
    "  bench-hardening [--slow N] [--bad N]    /health under slow clients, memory after bad input\n"
    "  tokenize F.gguf (--text T | --file F)   print a text's token ids [--bos] [--special]\n"
    "  apply-template (F.gguf | --template T) --conversation C.json   a chat's exact render\n"
    "\n"
    "run `switchyard <command> --help` for a command's options\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  // Configs may say `[model] generate`: this program writes such missing models.
  sy::modelgen::install_generate_hook();
  try {
    if (cmd == "run") return sy::cli::cmd_run(argc, argv);
    if (cmd == "mkmodel") return sy::cli::cmd_mkmodel(argc, argv);
    if (cmd == "info") return sy::cli::cmd_info(argc, argv);
    if (cmd == "eval") return sy::cli::cmd_eval(argc, argv);
    if (cmd == "plugins") return sy::cli::cmd_plugins(argc, argv);
    if (cmd == "bench-backend") return sy::cli::cmd_bench_backend(argc, argv);
    if (cmd == "bench-hybrid") return sy::cli::cmd_bench_hybrid(argc, argv);
    if (cmd == "bench") return sy::cli::cmd_bench(argc, argv);
    if (cmd == "serve") return sy::cli::cmd_serve(argc, argv);
    if (cmd == "bench-serve") return sy::cli::cmd_bench_serve(argc, argv);
    if (cmd == "bench-hardening") return sy::cli::cmd_bench_hardening(argc, argv);
    if (cmd == "tokenize") return sy::cli::cmd_tokenize(argc, argv);
    if (cmd == "apply-template") return sy::cli::cmd_apply_template(argc, argv);
    std::fprintf(stderr, "switchyard: unknown command '%s'\n\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const sy::cli::UsageError& e) {
    std::fprintf(stderr, "switchyard %s: %s\n", cmd.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "switchyard %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}
