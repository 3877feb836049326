// Branch counts as an lcov tracefile (the lcov 1.16 .info syntax), so what
// the probes saw (probe.h) renders with genhtml and merges with gcov's host
// tracefile (`lcov -a`). Operator-agnostic: sites are data.
//
// Per file:  TN:<test> / SF:<path> / BRDA:<line>,<block>,<branch>,<taken> ...
//            BRF / BRH / DA:<line>,<count> ... / LF / LH / end_of_record
// A site is one two-way decision on one line: branch 0 = condition true,
// branch 1 = condition false; its line count is how often it was evaluated.
// `taken` is "-" for both branches of a site never evaluated (lcov's "block
// not executed"). Probe branches use block kProbeBlock, which gcov's JSON
// capture never uses (it numbers blocks 0), so after a merge a line shows
// gcov's branches and the probe's side by side instead of adding unrelated
// counts together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nvh {

inline constexpr int kProbeBlock = 9000;

struct BranchSite {
  std::string file;  // SF path, as genhtml should find the source
  uint32_t line = 0;
  uint64_t taken = 0;      // condition true
  uint64_t not_taken = 0;  // condition false
};

struct TraceSummary {
  std::size_t files = 0;
  std::size_t lines_found = 0, lines_hit = 0;        // sites, and sites evaluated at least once
  std::size_t branches_found = 0, branches_hit = 0;  // 2 per site, and directions seen
};

// The tracefile text. Sites are grouped by file (sorted) and line; sites on
// the same (file, line) are added together. Throws std::invalid_argument for
// an empty file name, a line 0, or a test name that lcov would reject
// (only letters, digits and '_' are allowed).
std::string render_lcov_tracefile(const std::string& test_name,
                                  const std::vector<BranchSite>& sites);

// Writes render_lcov_tracefile to `path` (folders created); throws
// std::runtime_error when it cannot.
void write_lcov_tracefile(const std::string& path, const std::string& test_name,
                          const std::vector<BranchSite>& sites);

TraceSummary summarize(const std::vector<BranchSite>& sites);

// "lines 40/42 (95.2%), branches 70/84 (83.3%) in 6 files", then each site
// with a direction never seen ("not reached", "never true ", "never false"),
// at most `max_missed` of them, file names without `strip_prefix`.
std::string render_trace_summary(const std::vector<BranchSite>& sites, std::size_t max_missed = 20,
                                 const std::string& strip_prefix = "");

}  // namespace nvh
