// E2M1: all 16 codes, RNE ties on the grid, saturation, signed zero, NaN rejection.
#include "e2m1.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.h"

namespace nvfp4::ref {
namespace {

using testing::bits_of;
using testing::invalid_argument_message;

TEST(E2M1, DecodesAllSixteenCodesByBits) {
  const float magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (int code = 0; code < 16; ++code) {
    const float want = (code & 8) ? -magnitudes[code & 7] : magnitudes[code & 7];
    EXPECT_EQ(bits_of(e2m1_to_float(static_cast<uint8_t>(code))), bits_of(want)) << code;
  }
  EXPECT_EQ(bits_of(e2m1_to_float(0x8)), 0x80000000u);  // -0.0, by bit pattern
}

TEST(E2M1, RejectsCodesAboveFifteen) {
  EXPECT_EQ(invalid_argument_message([] { e2m1_to_float(16); }),
            "e2m1_to_float: code = 16: must be an E2M1 code 0..15");
  EXPECT_EQ(invalid_argument_message([] { e2m1_to_float(255); }),
            "e2m1_to_float: code = 255: must be an E2M1 code 0..15");
}

TEST(E2M1, EncodeInvertsDecodeForEveryCode) {
  for (int code = 0; code < 16; ++code) {
    EXPECT_EQ(float_to_e2m1(e2m1_to_float(static_cast<uint8_t>(code))), code);
  }
}

TEST(E2M1, TiesGoToTheEvenCode) {
  EXPECT_EQ(float_to_e2m1(0.25f), 0x0);  // 0 | 0.5
  EXPECT_EQ(float_to_e2m1(0.75f), 0x2);  // 0.5 | 1.0
  EXPECT_EQ(float_to_e2m1(1.25f), 0x2);  // 1.0 | 1.5
  EXPECT_EQ(float_to_e2m1(1.75f), 0x4);  // 1.5 | 2.0
  EXPECT_EQ(float_to_e2m1(2.5f), 0x4);   // 2 | 3
  EXPECT_EQ(float_to_e2m1(3.5f), 0x6);   // 3 | 4
  EXPECT_EQ(float_to_e2m1(5.0f), 0x6);   // 4 | 6
  EXPECT_EQ(float_to_e2m1(-5.0f), 0xE);
  EXPECT_EQ(float_to_e2m1(-0.25f), 0x8);
}

TEST(E2M1, OffTieValuesGoToTheNearest) {
  EXPECT_EQ(float_to_e2m1(std::nextafter(0.25f, 1.0f)), 0x1);
  EXPECT_EQ(float_to_e2m1(std::nextafter(5.0f, 6.0f)), 0x7);
  EXPECT_EQ(float_to_e2m1(std::nextafter(5.0f, 0.0f)), 0x6);
  EXPECT_EQ(float_to_e2m1(0.6f), 0x1);
  EXPECT_EQ(float_to_e2m1(-2.9f), 0xD);
}

TEST(E2M1, SaturatesAtSix) {
  EXPECT_EQ(float_to_e2m1(6.0f), 0x7);
  EXPECT_EQ(float_to_e2m1(7.0f), 0x7);  // would be a tie 6 | 8, but 8 does not exist
  EXPECT_EQ(float_to_e2m1(1e30f), 0x7);
  EXPECT_EQ(float_to_e2m1(-1e30f), 0xF);
  EXPECT_EQ(float_to_e2m1(std::numeric_limits<float>::infinity()), 0x7);
  EXPECT_EQ(float_to_e2m1(-std::numeric_limits<float>::infinity()), 0xF);
}

TEST(E2M1, KeepsTheSignOfZero) {
  EXPECT_EQ(float_to_e2m1(0.0f), 0x0);
  EXPECT_EQ(float_to_e2m1(-0.0f), 0x8);
  EXPECT_EQ(float_to_e2m1(-0.1f), 0x8);  // underflows to -0
  EXPECT_EQ(float_to_e2m1(std::numeric_limits<float>::denorm_min()), 0x0);
}

TEST(E2M1, RejectsNaN) {
  EXPECT_EQ(
      invalid_argument_message([] { float_to_e2m1(std::numeric_limits<float>::quiet_NaN()); }),
      "float_to_e2m1: v = nan: must not be NaN (E2M1 has no NaN)");
}

}  // namespace
}  // namespace nvfp4::ref
