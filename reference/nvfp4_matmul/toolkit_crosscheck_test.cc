// Verification level 1: the reference's primitives agree with the CUDA toolkit's host
// conversions on every input compared, -0.0 included (the NaN policy is in the .cc).
#include "toolkit_crosscheck.h"

#include <gtest/gtest.h>

namespace nvfp4::ref {
namespace {

// One run serves every test: the sweeps take about a second.
const PrimitiveReport& report() {
  static const PrimitiveReport r = check_primitives();
  return r;
}

// Plain TESTs rather than a parameterized suite: ctest names stay short and stable.
void expect_no_mismatches(const char* check) {
  const PrimitiveCheck* c = report().find(check);
  ASSERT_NE(c, nullptr) << "check_primitives() did not run: " << check;
  EXPECT_GT(c->compared, 0);
  EXPECT_EQ(c->mismatches, 0) << report().to_text();
}

TEST(ToolkitCrosscheck, E2m1ToFp16) { expect_no_mismatches(kCheckE2m1ToFp16); }
TEST(ToolkitCrosscheck, E2m1ToBf16) { expect_no_mismatches(kCheckE2m1ToBf16); }
TEST(ToolkitCrosscheck, E2m1ToBf16ViaFloat) { expect_no_mismatches(kCheckE2m1ToBf16ViaFloat); }
TEST(ToolkitCrosscheck, E4m3ToFp16) { expect_no_mismatches(kCheckE4m3ToFp16); }
TEST(ToolkitCrosscheck, E4m3ToFloat) { expect_no_mismatches(kCheckE4m3ToFloat); }
TEST(ToolkitCrosscheck, E4m3ToBf16) { expect_no_mismatches(kCheckE4m3ToBf16); }
TEST(ToolkitCrosscheck, FloatToE2m1) { expect_no_mismatches(kCheckFloatToE2m1); }
TEST(ToolkitCrosscheck, FloatToE4m3) { expect_no_mismatches(kCheckFloatToE4m3); }
TEST(ToolkitCrosscheck, FloatToFp16) { expect_no_mismatches(kCheckFloatToFp16); }
TEST(ToolkitCrosscheck, FloatToBf16) { expect_no_mismatches(kCheckFloatToBf16); }
TEST(ToolkitCrosscheck, DoubleToFp16) { expect_no_mismatches(kCheckDoubleToFp16); }
TEST(ToolkitCrosscheck, DoubleToBf16) { expect_no_mismatches(kCheckDoubleToBf16); }

TEST(ToolkitCrosscheckReport, RunsEveryListedCheck) {
  EXPECT_EQ(report().checks.size(), 12u);  // one TEST above per check
}

TEST(ToolkitCrosscheckReport, CountsEveryByteAndNibble) {
  EXPECT_EQ(report().find(kCheckE2m1ToFp16)->compared, 512);  // 256 bytes x 2 nibbles
  EXPECT_EQ(report().find(kCheckE2m1ToBf16)->compared, 512);
  EXPECT_EQ(report().find(kCheckE2m1ToBf16ViaFloat)->compared, 512);
  EXPECT_EQ(report().find(kCheckE4m3ToFp16)->compared, 256);
  EXPECT_EQ(report().find(kCheckE4m3ToFloat)->compared, 256);
  EXPECT_EQ(report().find(kCheckE4m3ToBf16)->compared, 256);
}

TEST(ToolkitCrosscheckReport, SkipsOnlyNaNForE2m1Encoding) {
  const PrimitiveCheck* e2m1 = report().find(kCheckFloatToE2m1);
  EXPECT_GT(e2m1->skipped, 0);
  EXPECT_NE(e2m1->skip_reason.find("NaN"), std::string::npos);
  for (const PrimitiveCheck& other : report().checks) {
    if (&other != e2m1) {
      EXPECT_EQ(other.skipped, 0) << other.name;
    }
  }
}

TEST(ToolkitCrosscheckReport, TextListsEveryCheck) {
  const std::string text = report().to_text();
  for (const PrimitiveCheck& c : report().checks) EXPECT_NE(text.find(c.name), std::string::npos);
  EXPECT_EQ(report().find("no such check"), nullptr);
}

}  // namespace
}  // namespace nvfp4::ref
