// The route-coverage gate over the families' own launches: it passes with
// every family, and fails, naming the family, when any one family's launches
// are taken away (the seed's blind spot: a family that never runs).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/route_gate.h"
#include "harness/route_record.h"
#include "properties/families.h"
#include "properties/route_coverage.h"
#include "properties/verify_case.h"

namespace nvfp4 {
namespace {

// The gate judges which routes, reasons and families launched, not sizes:
// examples sized to cross a kernel's grid cap (more than 2^18 elements in an
// operand) add no route or reason and would cost most of this test's time.
bool cap_sized(const CaseSpec& s) {
  return std::max({s.M * s.K, s.N * s.K, s.M * s.N}) > (int64_t{1} << 18);
}

std::vector<nvh::LaunchRecord> family_launches(nvh::Backend& backend) {
  nvh::RouteRecorder::global().clear();
  const AimContext here = aim_context(backend);
  for (const Family& f : all_families()) {
    std::vector<CaseSpec> cases;
    for (const CaseSpec& s : f.examples) {
      if (!cap_sized(s)) cases.push_back(s);
    }
    for (const CaseSpec& s : sample_family(f, 10, 7)) cases.push_back(s);
    for (const CaseSpec& spec : cases) {
      nvh::RecordContext context(f.name, spec.name());
      const CaseVerdict v = verify_case(backend, spec);
      EXPECT_TRUE(ran_or_gated(v, here))
          << spec.name() << ": " << outcome_name(v.outcome) << ": " << v.detail;
    }
  }
  return nvh::RouteRecorder::global().records();
}

TEST(RouteCoverageGate, PassesWithEveryFamilyAndFailsWithoutAnyOne) {
  auto host = nvh::make_host_backend();
  const std::vector<nvh::LaunchRecord> all = family_launches(*host);
  const nvh::GateDeclaration declaration = gate_declaration();
  const nvh::HardwareGates gates = hardware_gates(*host);
  const nvh::GateReport full = nvh::evaluate_gate(declaration, gates, all);
  ASSERT_TRUE(full.passed()) << nvh::render_gate_text(full);

  for (const Family& f : all_families()) {
    std::vector<nvh::LaunchRecord> without;
    for (const auto& r : all) {
      if (r.family != f.name) without.push_back(r);
    }
    const nvh::GateReport report = nvh::evaluate_gate(declaration, gates, without);
    EXPECT_FALSE(report.passed()) << "removing family " << f.name << " went unnoticed";
    const std::string text = nvh::render_gate_text(report);
    EXPECT_NE(text.find("family \"" + f.name + "\": MISSING"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace nvfp4
