#include "harness/progress.h"

#include <unistd.h>

#include <cstdio>

namespace nvh {

namespace {
constexpr auto kPipeInterval = std::chrono::seconds(5);
constexpr auto kTerminalInterval = std::chrono::milliseconds(100);
}  // namespace

Progress::Progress(std::string what, uint64_t total)
    : what_(std::move(what)),
      total_(total),
      terminal_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_ - kPipeInterval) {}

void Progress::update(uint64_t done, const std::string& note) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_print_ < (terminal_ ? std::chrono::steady_clock::duration(kTerminalInterval)
                                     : std::chrono::steady_clock::duration(kPipeInterval))) {
    return;
  }
  last_print_ = now;
  print(done, note, false);
}

void Progress::finish(const std::string& note) { print(total_, note, true); }

void Progress::print(uint64_t done, const std::string& note, bool last) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int percent = total_ ? static_cast<int>(100 * done / total_) : 100;
  std::fprintf(stderr, "%s[%s] %3d%% %llu/%llu %.1fs %s%s", terminal_ ? "\r\033[K" : "",
               what_.c_str(), percent, static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total_), seconds, note.c_str(),
               terminal_ && !last ? "" : "\n");
  std::fflush(stderr);
}

}  // namespace nvh
