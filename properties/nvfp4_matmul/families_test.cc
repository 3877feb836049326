// The property suites: each family on each backend through the harness's
// verify driver (the one loop `verify` runs): its boundary examples (and the
// aims they name), then 100 random cases, each checked for every property
// (verify_case.h), then the family's route and class targets. A failing case
// is printed by its key, which `nvfp4-harness verify --case KEY` reruns, and
// leaves a repro folder. The random cases' seed is NVFP4_TEST_SEED when set,
// else a fresh one each run, printed.
#include "properties/nvfp4_matmul/families.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/suite_cli.h"
#include "harness/verify_driver.h"
#include "properties/nvfp4_matmul/suite.h"
#include "properties/nvfp4_matmul/verify_case.h"

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

uint64_t test_seed() {
  if (const char* set = std::getenv("NVFP4_TEST_SEED")) return std::strtoull(set, nullptr, 10);
  static const uint64_t fresh = std::random_device{}();
  return fresh;
}

class FamilyProperties : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    ASSERT_NE(find_family(GetParam().family), nullptr);
    if (!nvh::backend_or_skip(GetParam().backend))
      GTEST_SKIP() << "cuda backend: " << nvh::cuda_unavailable_reason();
  }
};

TEST_P(FamilyProperties, BoundaryExamplesThenRandomCasesHold) {
  nvh::VerifyOptions o;
  o.families = {GetParam().family};
  o.random_cases = 100;
  o.seed = test_seed();
  o.skip = nvfp4_suite().skippable();
  o.isolate = false;
  o.out_dir = (std::filesystem::path(::testing::TempDir()) /
               ("nvfp4_family_" + GetParam().family + "_" + GetParam().backend))
                  .string();
  std::cout << "  random cases of seed " << o.seed << " (NVFP4_TEST_SEED=" << o.seed
            << " reruns them)\n";
  const std::string backend = GetParam().backend;
  std::ostringstream out;
  const int rc = nvh::run_verify(
      nvfp4_suite(), [backend] { return nvh::backend_named(backend); }, o, out);
  EXPECT_EQ(rc, 0) << out.str();
  std::filesystem::remove_all(o.out_dir);
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyProperties, ::testing::ValuesIn(params()),
                         [](const auto& info) {
                           return info.param.family + "_" + info.param.backend;
                         });

// The driver asks the suite to judge each family over its cases: random
// cases that drift off the family's routes fail it (as route-targets), and
// examples that miss their aims fail it (as aims); a shard judges neither.
TEST(FamilyJudgement, CasesOffTheFamilysRoutesFailItWhenTheWholeFamilyRan) {
  const nvh::OperatorSuite& suite = nvfp4_suite();
  for (const char* name : {"decode", "geometry"}) {
    SCOPED_TRACE(name);
    const nvh::CaseGroup g = suite.family_group(name, 10, 1);
    std::vector<nvh::CaseResult> results(g.cases.size());
    std::vector<nvh::CaseResult*> pointers;
    for (nvh::CaseResult& r : results) {
      r.route = "empty";  // no family but "empty" aims there
      pointers.push_back(&r);
    }
    nvh::BackendDescription host;
    const nvh::GroupJudgement whole = suite.judge_group(g, pointers, host, true);
    std::set<std::string> failed;
    for (const auto& [check, detail] : whole.failures) failed.insert(check);
    EXPECT_TRUE(failed.count("route-targets")) << name;
    if (!find_family(name)->aims.empty()) {
      EXPECT_TRUE(failed.count("aims")) << name;
    }
    EXPECT_TRUE(suite.judge_group(g, pointers, host, false).failures.empty());
  }
}

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
