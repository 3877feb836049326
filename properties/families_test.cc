// The property suites: each family's boundary examples (and the aims they
// name), then its random cases through RapidCheck (shrinking to a minimal
// failing shape, printing the case name and the RC_PARAMS reproduce string),
// then the family's route targets.
#include "properties/families.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/route_record.h"
#include "properties/verify_case.h"

namespace nvfp4 {
namespace {

struct Param {
  std::string family, backend;
};

std::vector<Param> params() {
  std::vector<Param> out;
  for (const Family& f : all_families()) {
    for (const std::string& backend : nvh::backend_names()) out.push_back({f.name, backend});
  }
  return out;
}

class FamilyProperties : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    family_ = find_family(GetParam().family);
    ASSERT_NE(family_, nullptr);
    backend_ = nvh::backend_or_skip(GetParam().backend);
    if (!backend_) GTEST_SKIP() << "cuda backend: " << nvh::cuda_unavailable_reason();
  }
  const Family* family_ = nullptr;
  std::unique_ptr<nvh::Backend> backend_;
};

TEST_P(FamilyProperties, BoundaryExamplesThenRandomCasesHold) {
  const Family& f = *family_;
  std::vector<ClassRun> class_runs;  // what each passing case ran, for the family's class targets
  const AimContext here = aim_context(*backend_);
  std::vector<ExampleResult> results;
  for (const CaseSpec& spec : f.examples) {
    nvh::RecordContext context(f.name, spec.name());
    const CaseVerdict v = verify_case(*backend_, spec);
    // OK, or NOT_SUPPORTED for a route this backend is hardware-gated for.
    EXPECT_TRUE(ran_or_gated(v, here))
        << spec.name() << ": " << outcome_name(v.outcome) << ": " << v.detail;
    if (v.outcome == Outcome::ok) class_runs.push_back({spec.value_class, v.routes_run});
    results.push_back({spec, v});
  }
  EXPECT_EQ(check_aims(f, results, here), "");
  for (const std::string& why : aims_unreachable_here(f, here))
    std::cout << "  aim not reachable here: " << why << "\n";

  std::vector<Route> taken;
  const bool held = rc::check(f.name + " on " + GetParam().backend, [&] {
    const CaseSpec spec = *f.random;
    nvh::RecordContext context(f.name, spec.name());
    const CaseVerdict v = verify_case(*backend_, spec);
    RC_ASSERT(v.outcome == Outcome::ok || (RC_LOG() << spec.name() << ": " << v.detail, false));
    taken.push_back(*parse_route(v.route));
    class_runs.push_back({spec.value_class, v.routes_run});
  });
  EXPECT_TRUE(held) << "see RapidCheck's counterexample and RC_PARAMS reproduce string above";
  if (held) {
    EXPECT_EQ(check_targets(f, taken), "");
  }
  EXPECT_EQ(check_class_targets(f, class_runs), "");
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyProperties, ::testing::ValuesIn(params()),
                         [](const auto& info) {
                           return info.param.family + "_" + info.param.backend;
                         });

// A case's name is its identity (manifest key, filter): unique in its family,
// and every aim names examples the family has.
TEST(FamilyDefinitions, ExampleNamesAreUniqueAndEveryAimNamesExamples) {
  for (const Family& f : all_families()) {
    std::set<std::string> names;
    for (const CaseSpec& s : f.examples)
      EXPECT_TRUE(names.insert(s.name()).second) << f.name << ": " << s.name() << " twice";
    std::set<std::string> named;
    for (const Aim& a : f.aims) {
      EXPECT_FALSE(a.cases.empty()) << f.name << ": " << a.claim;
      for (const std::string& c : a.cases) {
        EXPECT_TRUE(names.count(c))
            << f.name << ": aim \"" << a.claim << "\" names " << c << ", not an example";
        named.insert(c);
      }
    }
    if (!f.aims.empty()) {
      EXPECT_EQ(named, names) << f.name << ": every example states an aim";
    }
  }
  for (const char* name : {"geometry", "capability", "alignment"}) {
    ASSERT_NE(find_family(name), nullptr) << name;
    EXPECT_FALSE(find_family(name)->aims.empty()) << name;
  }
}

// check_aims can fail: examples that did not run, or ran elsewhere than aimed.
TEST(FamilyDefinitions, CheckAimsReportsMissedAndUnrunExamples) {
  const Family& f = *find_family("capability");
  const AimContext host;
  EXPECT_NE(check_aims(f, {}, host).find("did not run"), std::string::npos);
  std::vector<ExampleResult> wrong;
  for (const CaseSpec& s : f.examples)
    wrong.push_back({s, CaseVerdict{}});  // OK on route empty, no reason
  const std::string problems = check_aims(f, wrong, host);
  for (const Aim& a : f.aims) EXPECT_NE(problems.find(a.claim), std::string::npos) << problems;
}

// run_case puts every operand where the spec's offsets say (what the
// alignment family's aims read back), and the offsets are part of the name.
TEST(CaseSpecOffsets, EveryOperandLandsAtItsOffsetAndIsNamed) {
  auto host = nvh::make_host_backend();
  CaseSpec s = make_case("adhoc", 9, 16, 100, 16, DType::fp16, true);
  s.a_offset = 2;
  s.b_offset = 3;
  s.scales_offset = 5;
  s.scale2_offset = 12;
  s.bias_offset = 6;
  s.y_offset = 10;
  s.scratch_offset = 14;
  const CaseRun run = run_case(*host, s, make_inputs(s));
  const AddressClasses& a = run.addresses;
  EXPECT_EQ(
      std::vector<uint32_t>({a.A, a.B, a.weight_scale, a.weight_scale_2, a.bias, a.Y, a.scratch}),
      std::vector<uint32_t>({2, 3, 5, 12, 6, 10, 14}));
  EXPECT_EQ(run.damaged_guard_bytes, 0u);
  EXPECT_EQ(
      s.name(),
      "fp16_M9_N16_K100_bs16_bias_offA2_offB3_offS14_offScale5_offGlobal12_offBias6_offY10_s1");
  Caps sm120;
  sm120.sm = 120;
  sm120.native_fp4 = true;
  CaseSpec native = make_case("adhoc", 9, 32, 64, 16, DType::fp16, false);
  native.options.simulated_caps = sm120;
  CaseSpec no_fp4 = native;
  no_fp4.options.simulated_caps->native_fp4 = false;
  EXPECT_EQ(native.name(), "fp16_M9_N32_K64_bs16_sm120_fp4_s1");
  EXPECT_NE(native.name(), no_fp4.name());
}

}  // namespace
}  // namespace nvfp4
