#include "bench/progress.h"

#include <unistd.h>

#include "host/host_api.h"

namespace sy::bench {

Progress::Progress(std::FILE* out, bool enabled)
    : out_(out), enabled_(enabled), tty_(enabled && isatty(fileno(out))) {}

void Progress::begin(const std::string& label, size_t total) {
  label_ = label;
  total_ = total;
  done_ = 0;
  t0_ = now_ns();
  last_draw_ = 0;
  draw();
}

void Progress::update(size_t done) {
  done_ = done;
  // At most ~20 redraws a second: the bar must not cost the engine time.
  if (tty_ && now_ns() - last_draw_ > 50'000'000) draw();
}

void Progress::draw() {
  if (!tty_) return;
  last_draw_ = now_ns();
  constexpr int kWidth = 28;
  const int filled = total_ ? static_cast<int>(kWidth * done_ / total_) : 0;
  std::string bar(filled, '#');
  bar.append(kWidth - filled, '.');
  std::fprintf(out_, "\r\033[K%s [%s] %zu/%zu  %.1f s", label_.c_str(), bar.c_str(), done_, total_,
               (now_ns() - t0_) / 1e9);
  std::fflush(out_);
}

void Progress::end(const std::string& summary) {
  if (!enabled_) return;
  std::fprintf(out_, "%s%s: %s\n", tty_ ? "\r\033[K" : "", label_.c_str(), summary.c_str());
  std::fflush(out_);
}

void Progress::note(const std::string& line) {
  if (!enabled_) return;
  std::fprintf(out_, "%s%s\n", tty_ ? "\r\033[K" : "", line.c_str());
  std::fflush(out_);
}

}  // namespace sy::bench
