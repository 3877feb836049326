// The property suites: each family's boundary examples, then its random cases
// through RapidCheck (shrinking to a minimal failing shape, printing the case
// name and the RC_PARAMS reproduce string), then the family's route targets.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/route_record.h"
#include "properties/families.h"
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
  for (const CaseSpec& spec : f.examples) {
    nvh::RecordContext context(f.name, spec.name());
    const CaseVerdict v = verify_case(*backend_, spec);
    EXPECT_EQ(outcome_name(v.outcome), std::string("OK")) << spec.name() << ": " << v.detail;
    if (v.outcome == Outcome::ok) class_runs.push_back({spec.value_class, v.routes_run});
  }

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
                         [](const auto& info) { return info.param.family + "_" + info.param.backend; });

}  // namespace
}  // namespace nvfp4
