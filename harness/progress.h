// Progress for long runs, on stderr: a line rewritten in place on a terminal,
// a line every few seconds (and at the end) when stderr is a file or pipe, so
// CI logs show life without drowning in updates.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace nvh {

class Progress {
 public:
  Progress(std::string what, uint64_t total);
  // Reports that `done` of `total` are finished; `note` says what runs now.
  void update(uint64_t done, const std::string& note);
  // Ends the line and prints the elapsed time.
  void finish(const std::string& note);

 private:
  void print(uint64_t done, const std::string& note, bool last);
  std::string what_;
  uint64_t total_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_, last_print_;
};

}  // namespace nvh
