#include "harness/lcov_trace.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace nvh {
namespace {

using Counts = std::pair<uint64_t, uint64_t>;  // taken, not taken
using ByFile = std::map<std::string, std::map<uint32_t, Counts>>;

ByFile group(const std::vector<BranchSite>& sites) {
  ByFile by_file;
  for (const BranchSite& s : sites) {
    if (s.file.empty())
      throw std::invalid_argument("render_lcov_tracefile: a site has an empty file name");
    if (s.line == 0) throw std::invalid_argument("render_lcov_tracefile: " + s.file + ": line = 0");
    Counts& c = by_file[s.file][s.line];
    c.first += s.taken;
    c.second += s.not_taken;
  }
  return by_file;
}

void check_test_name(const std::string& name) {
  for (char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '_';
    if (!ok) {
      throw std::invalid_argument("render_lcov_tracefile: test_name = \"" + name +
                                  "\": lcov allows only letters, digits and '_'");
    }
  }
}

// lcov writes "-" for a branch whose block never ran, 0 for one that ran but
// went the other way.
std::string branch_count(uint64_t count, bool evaluated) {
  return evaluated ? std::to_string(count) : "-";
}

std::string percent(std::size_t hit, std::size_t found) {
  if (found == 0) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f%%",
                100.0 * static_cast<double>(hit) / static_cast<double>(found));
  return buf;
}

}  // namespace

std::string render_lcov_tracefile(const std::string& test_name,
                                  const std::vector<BranchSite>& sites) {
  check_test_name(test_name);
  std::ostringstream out;
  for (const auto& [file, lines] : group(sites)) {
    out << "TN:" << test_name << "\n"
        << "SF:" << file << "\n";
    std::size_t brf = 0, brh = 0, lh = 0;
    for (const auto& [line, c] : lines) {
      const bool evaluated = c.first + c.second > 0;
      out << "BRDA:" << line << "," << kProbeBlock << ",0," << branch_count(c.first, evaluated)
          << "\n";
      out << "BRDA:" << line << "," << kProbeBlock << ",1," << branch_count(c.second, evaluated)
          << "\n";
      brf += 2;
      brh += (c.first > 0) + (c.second > 0);
    }
    out << "BRF:" << brf << "\nBRH:" << brh << "\n";
    for (const auto& [line, c] : lines) {
      out << "DA:" << line << "," << c.first + c.second << "\n";
      lh += c.first + c.second > 0;
    }
    out << "LF:" << lines.size() << "\nLH:" << lh << "\nend_of_record\n";
  }
  return out.str();
}

void write_lcov_tracefile(const std::string& path, const std::string& test_name,
                          const std::vector<BranchSite>& sites) {
  const std::string text = render_lcov_tracefile(test_name, sites);
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) throw std::runtime_error("write_lcov_tracefile: cannot write " + path);
}

TraceSummary summarize(const std::vector<BranchSite>& sites) {
  TraceSummary s;
  const ByFile by_file = group(sites);
  s.files = by_file.size();
  for (const auto& [file, lines] : by_file) {
    for (const auto& [line, c] : lines) {
      ++s.lines_found;
      s.lines_hit += c.first + c.second > 0;
      s.branches_found += 2;
      s.branches_hit += (c.first > 0) + (c.second > 0);
    }
  }
  return s;
}

std::string render_trace_summary(const std::vector<BranchSite>& sites, std::size_t max_missed,
                                 const std::string& strip_prefix) {
  const TraceSummary s = summarize(sites);
  std::ostringstream out;
  out << "lines " << s.lines_hit << "/" << s.lines_found << " ("
      << percent(s.lines_hit, s.lines_found) << "), branches " << s.branches_hit << "/"
      << s.branches_found << " (" << percent(s.branches_hit, s.branches_found) << ") in " << s.files
      << " files\n";
  std::size_t missed = 0;
  for (const auto& [file, lines] : group(sites)) {
    const bool strip =
        !strip_prefix.empty() && file.compare(0, strip_prefix.size(), strip_prefix) == 0;
    const std::string name = strip ? file.substr(strip_prefix.size()) : file;
    for (const auto& [line, c] : lines) {
      if (c.first > 0 && c.second > 0) continue;
      if (missed++ >= max_missed) continue;
      const char* what = c.first + c.second == 0 ? "not reached"
                         : c.first == 0          ? "never true "
                                                 : "never false";
      out << "  " << what << "  " << name << ":" << line << "\n";
    }
  }
  if (missed > max_missed) out << "  ... and " << missed - max_missed << " more sites\n";
  return out.str();
}

}  // namespace nvh
