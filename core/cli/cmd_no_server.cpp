// The server's commands in a build without the HTTP server (SWITCHYARD_SERVER off): each says so
// and how to get it, instead of an "unknown command".
#include <stdexcept>

#include "cli/commands.h"
#include "switchyard/common/error.h"

namespace sy::cli {
namespace {

[[noreturn]] void no_server() {
  throw sy::Error(SY_ERR_UNSUPPORTED,
                  "this build has no HTTP server (configure with -DSWITCHYARD_SERVER=ON)");
}

}  // namespace

int cmd_serve(int, char**) {
  no_server();
}
int cmd_bench_serve(int, char**) {
  no_server();
}
// bench-hardening drives a `switchyard serve` child.
int cmd_bench_hardening(int, char**) {
  no_server();
}

}  // namespace sy::cli
