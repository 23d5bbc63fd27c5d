#include "server/signals.h"

#include <csignal>

namespace sy::server {
namespace {

volatile std::sig_atomic_t g_hup = 0;
volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_hup(int) {
  g_hup = 1;
}
extern "C" void on_stop(int) {
  g_stop = g_stop + 1;
}

}  // namespace

void install_signal_handlers() {
  std::signal(SIGHUP, on_hup);
  std::signal(SIGINT, on_stop);
  std::signal(SIGTERM, on_stop);
  std::signal(SIGPIPE, SIG_IGN);
}

bool take_sighup() {
  if (!g_hup) return false;
  g_hup = 0;
  return true;
}

bool stop_requested() {
  return g_stop != 0;
}

int stop_signals() {
  return g_stop;
}

}  // namespace sy::server
