// E4M3 (fn): all 256 bytes against the format definition, RNE, saturation at 448, NaN, -0.0.
#include "e4m3.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.h"

namespace nvfp4::ref {
namespace {

using testing::bits_of;

// The definition, written out independently of minifloat.h: sign, 4 exponent bits (bias 7),
// 3 mantissa bits; exponent 0 is subnormal (m/8 * 2^-6); 0x7F/0xFF are NaN.
float definition(int byte) {
  const int e = (byte >> 3) & 0xF, m = byte & 7;
  const double magnitude =
      e == 0 ? m / 8.0 * std::ldexp(1.0, -6) : (1 + m / 8.0) * std::ldexp(1.0, e - 7);
  return static_cast<float>((byte & 0x80) ? -magnitude : magnitude);
}

TEST(E4M3, DecodesAll256BytesByBits) {
  for (int byte = 0; byte < 256; ++byte) {
    const float got = e4m3_to_float(static_cast<uint8_t>(byte));
    if ((byte & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(got)) << byte;
    } else {
      EXPECT_EQ(bits_of(got), bits_of(definition(byte))) << byte;
    }
  }
}

TEST(E4M3, DecodesLandmarks) {
  EXPECT_EQ(e4m3_to_float(0x01), 0x1p-9f);    // smallest subnormal
  EXPECT_EQ(e4m3_to_float(0x07), 0x1.cp-7f);  // largest subnormal, 7 * 2^-9
  EXPECT_EQ(e4m3_to_float(0x08), 0x1p-6f);    // smallest normal
  EXPECT_EQ(e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(e4m3_to_float(0xFE), -448.0f);
  EXPECT_EQ(bits_of(e4m3_to_float(0x80)), 0x80000000u);  // -0.0
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7F)));
  EXPECT_TRUE(std::isnan(e4m3_to_float(0xFF)));
}

TEST(E4M3, EncodeInvertsDecodeForEveryNonNaNByte) {
  for (int byte = 0; byte < 256; ++byte) {
    if ((byte & 0x7F) == 0x7F) continue;
    EXPECT_EQ(float_to_e4m3(e4m3_to_float(static_cast<uint8_t>(byte))), byte) << byte;
  }
}

TEST(E4M3, TiesGoToTheEvenMantissa) {
  EXPECT_EQ(float_to_e4m3(0x1p-10f), 0x00);        // 0 | 2^-9
  EXPECT_EQ(float_to_e4m3(0x1.8p-9f), 0x02);       // 1 | 2 subnormal ulps
  EXPECT_EQ(float_to_e4m3(7.5f * 0x1p-9f), 0x08);  // largest subnormal | smallest normal
  EXPECT_EQ(float_to_e4m3(1.0625f), 0x38);         // 1 | 1.125
  EXPECT_EQ(float_to_e4m3(1.1875f), 0x3A);         // 1.125 | 1.25
  EXPECT_EQ(float_to_e4m3(-1.0625f), 0xB8);
  EXPECT_EQ(float_to_e4m3(std::nextafter(1.0625f, 2.0f)), 0x39);
}

TEST(E4M3, SaturatesAbove448) {
  EXPECT_EQ(float_to_e4m3(448.0f), 0x7E);
  EXPECT_EQ(float_to_e4m3(464.0f), 0x7E);  // max + half ulp: saturates, never the NaN 0x7F
  EXPECT_EQ(float_to_e4m3(480.0f), 0x7E);
  EXPECT_EQ(float_to_e4m3(1e30f), 0x7E);
  EXPECT_EQ(float_to_e4m3(-1e30f), 0xFE);
  EXPECT_EQ(float_to_e4m3(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(float_to_e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
}

TEST(E4M3, NaNAndSignedZero) {
  EXPECT_EQ(float_to_e4m3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(float_to_e4m3(-std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(float_to_e4m3(0.0f), 0x00);
  EXPECT_EQ(float_to_e4m3(-0.0f), 0x80);
  EXPECT_EQ(float_to_e4m3(-0x1p-11f), 0x80);  // underflow keeps the sign
}

}  // namespace
}  // namespace nvfp4::ref
