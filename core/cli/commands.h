// The `switchyard` subcommands; each returns the process exit code.
#pragma once

namespace sy::cli {

int cmd_mkmodel(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_info(int argc, char** argv);
int cmd_eval(int argc, char** argv);
int cmd_plugins(int argc, char** argv);
int cmd_bench_backend(int argc, char** argv);
int cmd_bench_hybrid(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_serve(int argc, char** argv);
int cmd_bench_serve(int argc, char** argv);
int cmd_bench_hardening(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_apply_template(int argc, char** argv);

}  // namespace sy::cli
