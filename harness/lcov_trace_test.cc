#include "harness/lcov_trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace nvh {
namespace {

// The exact lcov 1.16 record for two files, sites out of order on input.
TEST(LcovTrace, WritesOneRecordPerFileInLcovSyntax) {
  const std::vector<BranchSite> sites = {
      {"/src/kernels/b.cuh", 30, 0, 0},
      {"/src/kernels/a.cuh", 12, 5, 0},
      {"/src/kernels/a.cuh", 7, 3, 4},
  };
  EXPECT_EQ(render_lcov_tracefile("device_probes", sites),
            "TN:device_probes\n"
            "SF:/src/kernels/a.cuh\n"
            "BRDA:7,9000,0,3\n"
            "BRDA:7,9000,1,4\n"
            "BRDA:12,9000,0,5\n"
            "BRDA:12,9000,1,0\n"
            "BRF:4\nBRH:3\n"
            "DA:7,7\n"
            "DA:12,5\n"
            "LF:2\nLH:2\n"
            "end_of_record\n"
            "TN:device_probes\n"
            "SF:/src/kernels/b.cuh\n"
            "BRDA:30,9000,0,-\n"
            "BRDA:30,9000,1,-\n"
            "BRF:2\nBRH:0\n"
            "DA:30,0\n"
            "LF:1\nLH:0\n"
            "end_of_record\n");
}

TEST(LcovTrace, AddsSitesOnTheSameLine) {
  const std::vector<BranchSite> sites = {{"f.cuh", 3, 1, 0}, {"f.cuh", 3, 2, 5}};
  const std::string text = render_lcov_tracefile("t", sites);
  EXPECT_NE(text.find("BRDA:3,9000,0,3\nBRDA:3,9000,1,5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("DA:3,8\n"), std::string::npos) << text;
}

TEST(LcovTrace, NoSitesIsAnEmptyTracefile) { EXPECT_EQ(render_lcov_tracefile("t", {}), ""); }

TEST(LcovTrace, RejectsWhatLcovWouldReject) {
  EXPECT_THROW(render_lcov_tracefile("has space", {{"f", 1, 0, 0}}), std::invalid_argument);
  EXPECT_THROW(render_lcov_tracefile("sm-90", {}), std::invalid_argument);
  EXPECT_THROW(render_lcov_tracefile("t", {{"", 1, 0, 0}}), std::invalid_argument);
  try {
    render_lcov_tracefile("t", {{"k.cuh", 0, 1, 1}});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("k.cuh: line = 0"), std::string::npos) << e.what();
  }
}

TEST(LcovTrace, SummaryCountsSitesAndDirections) {
  const std::vector<BranchSite> sites = {{"a", 1, 2, 0}, {"a", 2, 1, 1}, {"b", 5, 0, 0}};
  const TraceSummary s = summarize(sites);
  EXPECT_EQ(s.files, 2u);
  EXPECT_EQ(s.lines_found, 3u);
  EXPECT_EQ(s.lines_hit, 2u);
  EXPECT_EQ(s.branches_found, 6u);
  EXPECT_EQ(s.branches_hit, 3u);
  EXPECT_EQ(render_trace_summary(sites, 1),
            "lines 2/3 (66.7%), branches 3/6 (50.0%) in 2 files\n"
            "  never false  a:1\n"
            "  ... and 1 more sites\n");
  EXPECT_EQ(
      render_trace_summary({{"/src/k/a.cuh", 1, 0, 3}, {"/src/k/b.cuh", 2, 0, 0}}, 20, "/src/"),
      "lines 1/2 (50.0%), branches 1/4 (25.0%) in 2 files\n"
      "  never true   k/a.cuh:1\n"
      "  not reached  k/b.cuh:2\n");
}

TEST(LcovTrace, WritesTheFileAndNamesAnUnwritablePath) {
  const auto dir = std::filesystem::temp_directory_path() / "nvh_lcov_trace_test";
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "sub" / "probes.info").string();
  write_lcov_tracefile(path, "t", {{"x.cuh", 4, 1, 0}});
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_EQ(text.str(), render_lcov_tracefile("t", {{"x.cuh", 4, 1, 0}}));
  std::filesystem::remove_all(dir);
  EXPECT_THROW(write_lcov_tracefile("/proc/nvh-no/such.info", "t", {}), std::exception);
}

}  // namespace
}  // namespace nvh
