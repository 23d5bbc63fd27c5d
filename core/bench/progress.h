// Progress on the terminal while a bench runs: a redrawn bar on a TTY, one line per finished
// phase otherwise (logs and CTest output stay readable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace sy::bench {

class Progress {
 public:
  explicit Progress(std::FILE* out, bool enabled = true);
  void begin(const std::string& label, size_t total);
  void update(size_t done);
  void end(const std::string& summary);
  void note(const std::string& line);  // a line of its own (a skipped variant)

 private:
  void draw();
  std::FILE* out_;
  bool enabled_, tty_;
  std::string label_;
  size_t total_ = 0, done_ = 0;
  int64_t t0_ = 0, last_draw_ = 0;
};

}  // namespace sy::bench
