// The route-coverage gate over the families' own launches, run through the
// harness's verify driver: it passes with every family, and fails, naming
// the family, when any one family's launches are taken away (the seed's blind
// spot: a family that never runs).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "harness/route_gate.h"
#include "harness/route_record.h"
#include "harness/verify_driver.h"
#include "properties/nvfp4_matmul/matmul_case.h"
#include "properties/nvfp4_matmul/suite.h"

namespace nvfp4 {
namespace {

// The gate judges which routes, reasons and families launched, not sizes:
// examples sized to cross a kernel's grid cap (more than 2^18 elements in an
// operand) add no route or reason and would cost most of this test's time.
bool cap_sized(const std::string& case_name) {
  const CaseSpec s = parse_case_name(case_name);
  return std::max({s.M * s.K, s.N * s.K, s.M * s.N}) > (int64_t{1} << 18);
}

// Every family's cases (10 random of seed 7 each, cap-sized examples left
// out) on the host executor, in process; their launches as the run logged them.
std::vector<nvh::LaunchRecord> family_launches() {
  nvh::VerifyOptions o;
  o.random_cases = 10;
  o.seed = 7;
  o.skip = nvfp4_suite().skippable();
  o.isolate = false;
  o.out_dir = (std::filesystem::path(::testing::TempDir()) / "nvfp4_gate_test").string();
  o.case_filter = [](const std::string&, const std::string& name) { return !cap_sized(name); };
  std::ostringstream out;
  EXPECT_EQ(nvh::run_verify(
                nvfp4_suite(), [] { return nvh::make_host_backend(); }, o, out),
            0)
      << out.str();
  return nvh::read_route_log(o.out_dir + "/routes.jsonl");
}

TEST(RouteCoverageGate, PassesWithEveryFamilyAndFailsWithoutAnyOne) {
  const std::vector<nvh::LaunchRecord> all = family_launches();
  const nvh::OperatorSuite& suite = nvfp4_suite();
  const nvh::GateDeclaration declaration = suite.gate_declaration();
  const nvh::HardwareGates gates = suite.hardware_gates(*nvh::make_host_backend());
  const nvh::GateReport full = nvh::evaluate_gate(declaration, gates, all);
  ASSERT_TRUE(full.passed()) << nvh::render_gate_text(full);

  for (const std::string& f : suite.family_names()) {
    std::vector<nvh::LaunchRecord> without;
    for (const auto& r : all) {
      if (r.family != f) without.push_back(r);
    }
    const nvh::GateReport report = nvh::evaluate_gate(declaration, gates, without);
    EXPECT_FALSE(report.passed()) << "removing family " << f << " went unnoticed";
    const std::string text = nvh::render_gate_text(report);
    EXPECT_NE(text.find("family \"" + f + "\": MISSING"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace nvfp4
