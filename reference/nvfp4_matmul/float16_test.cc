// fp16/bf16 rounding by bit pattern: exact values, ties, subnormals, overflow, NaN, signed zero.
#include "float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "test_util.h"

namespace nvfp4::ref {
namespace {

using testing::invalid_argument_message;

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
double p2(int e) { return std::ldexp(1.0, e); }

TEST(Float16, HalfNames) {
  EXPECT_STREQ(half_name(Half::fp16), "fp16");
  EXPECT_STREQ(half_name(Half::bf16), "bf16");
}

TEST(Float16, Fp16ExactValues) {
  EXPECT_EQ(round_to_half(1.0, Half::fp16), 0x3C00);
  EXPECT_EQ(round_to_half(-2.0, Half::fp16), 0xC000);
  EXPECT_EQ(round_to_half(65504.0, Half::fp16), 0x7BFF);            // largest finite
  EXPECT_EQ(round_to_half(p2(-14), Half::fp16), 0x0400);            // smallest normal
  EXPECT_EQ(round_to_half(p2(-24), Half::fp16), 0x0001);            // smallest subnormal
  EXPECT_EQ(round_to_half(p2(-14) - p2(-24), Half::fp16), 0x03FF);  // largest subnormal
  EXPECT_EQ(round_to_half(0.0, Half::fp16), 0x0000);
  EXPECT_EQ(round_to_half(-0.0, Half::fp16), 0x8000);
}

TEST(Float16, Fp16TiesGoToEven) {
  EXPECT_EQ(round_to_half(1 + p2(-11), Half::fp16), 0x3C00);      // 0x3C00 | 0x3C01
  EXPECT_EQ(round_to_half(1 + 3 * p2(-11), Half::fp16), 0x3C02);  // 0x3C01 | 0x3C02
  EXPECT_EQ(round_to_half(std::nextafter(1 + p2(-11), 2.0), Half::fp16), 0x3C01);
  EXPECT_EQ(round_to_half(-(1 + p2(-11)), Half::fp16), 0xBC00);
}

TEST(Float16, Fp16SubnormalTiesAndUnderflow) {
  EXPECT_EQ(round_to_half(p2(-25), Half::fp16), 0x0000);      // 0 | 2^-24: even is 0
  EXPECT_EQ(round_to_half(3 * p2(-25), Half::fp16), 0x0002);  // 1 | 2 ulps: even is 2
  EXPECT_EQ(round_to_half(std::nextafter(p2(-25), 1.0), Half::fp16), 0x0001);
  EXPECT_EQ(round_to_half(-p2(-30), Half::fp16), 0x8000);           // underflow keeps the sign
  EXPECT_EQ(round_to_half(p2(-14) - p2(-25), Half::fp16), 0x0400);  // tie 0x03FF | 0x0400
}

TEST(Float16, Fp16Overflow) {
  EXPECT_EQ(round_to_half(65520.0, Half::fp16), 0x7C00);  // max + half ulp: the tie goes to inf
  EXPECT_EQ(round_to_half(std::nextafter(65520.0, 0.0), Half::fp16), 0x7BFF);
  EXPECT_EQ(round_to_half(-65520.0, Half::fp16), 0xFC00);
  EXPECT_EQ(round_to_half(1e300, Half::fp16), 0x7C00);
  EXPECT_EQ(round_to_half(kInf, Half::fp16), 0x7C00);
  EXPECT_EQ(round_to_half(-kInf, Half::fp16), 0xFC00);
}

// Every NaN, whatever its sign and payload, becomes 0x7FFF: the NaN the GPU's conversions,
// HMUL2, mma.sync and cuBLASLt write (DESIGN.md, "Special values").
TEST(Float16, NaNBecomes7FFF) {
  const float payloads[] = {std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::signaling_NaN(), std::nanf("0x1234")};
  for (Half kind : {Half::fp16, Half::bf16}) {
    EXPECT_EQ(round_to_half(kNaN, kind), 0x7FFF);
    EXPECT_EQ(round_to_half(-kNaN, kind), 0x7FFF);
    for (float nan : payloads) EXPECT_EQ(round_float_to_half(nan, kind), 0x7FFF);
  }
}

TEST(Float16, Bf16ExactValuesTiesSubnormalsOverflow) {
  EXPECT_EQ(round_to_half(1.0, Half::bf16), 0x3F80);
  EXPECT_EQ(round_to_half(-0.0, Half::bf16), 0x8000);
  EXPECT_EQ(round_to_half(1 + p2(-8), Half::bf16), 0x3F80);      // tie: even
  EXPECT_EQ(round_to_half(1 + 3 * p2(-8), Half::bf16), 0x3F82);  // tie: even
  EXPECT_EQ(round_to_half(p2(-133), Half::bf16), 0x0001);        // smallest subnormal
  EXPECT_EQ(round_to_half(p2(-134), Half::bf16), 0x0000);        // tie 0 | 1
  EXPECT_EQ(round_to_half(p2(-126), Half::bf16), 0x0080);        // smallest normal
  const double max = 0x1.FEp127;
  EXPECT_EQ(round_to_half(max, Half::bf16), 0x7F7F);
  EXPECT_EQ(round_to_half(max + p2(119), Half::bf16), 0x7F80);  // max + half ulp
  EXPECT_EQ(round_to_half(std::nextafter(max + p2(119), 0.0), Half::bf16), 0x7F7F);
  EXPECT_EQ(round_to_half(-kInf, Half::bf16), 0xFF80);
}

// From a float it is one rounding; from a double too -- rounding the double to float first
// could land on a tie that the double was not on.
TEST(Float16, FloatAndDoublePathsRoundOnce) {
  EXPECT_EQ(round_float_to_half(1.0f + 0x1p-11f, Half::fp16), 0x3C00);
  const double above_tie = 1 + p2(-11) + p2(-40);  // the float nearest to it is the tie itself
  EXPECT_EQ(round_to_half(above_tie, Half::fp16), 0x3C01);
  EXPECT_EQ(round_float_to_half(static_cast<float>(above_tie), Half::fp16), 0x3C00);
  EXPECT_EQ(round_float_to_half(-0.0f, Half::fp16), 0x8000);
  EXPECT_EQ(round_float_to_half(std::numeric_limits<float>::max(), Half::bf16),
            0x7F80);  // > bf16 max + half ulp
}

// Every non-NaN pattern decodes to a value that rounds back to the same pattern, -0.0 included;
// every NaN pattern decodes to NaN.
TEST(Float16, EveryPatternRoundTrips) {
  for (Half kind : {Half::fp16, Half::bf16}) {
    for (uint32_t b = 0; b < 65536; ++b) {
      const auto bits = static_cast<uint16_t>(b);
      const double v = half_to_double(bits, kind);
      if (std::isnan(v)) {
        const uint16_t exp_mask = kind == Half::fp16 ? 0x7C00 : 0x7F80;
        ASSERT_EQ(bits & exp_mask, exp_mask) << std::hex << b;
        ASSERT_NE(bits & 0x7FFF & ~exp_mask, 0) << std::hex << b;
        continue;
      }
      ASSERT_EQ(round_to_half(v, kind), bits) << half_name(kind) << " 0x" << std::hex << b;
    }
  }
}

// The operands' bulk decode (a table of every pattern) gives half_to_double's
// value for every pattern, bit for bit (NaN as half_to_double's NaN), in
// both kinds, and in the order given.
TEST(Float16, BulkDecodeIsHalfToDoubleOfEveryPattern) {
  std::vector<uint16_t> every(65536);
  for (uint32_t b = 0; b < every.size(); ++b) every[b] = static_cast<uint16_t>(65535 - b);
  for (Half kind : {Half::fp16, Half::bf16}) {
    const std::vector<double> bulk = halves_to_doubles(every.data(), 65536, kind);
    ASSERT_EQ(bulk.size(), every.size());
    for (std::size_t i = 0; i < every.size(); ++i) {
      const double one = half_to_double(every[i], kind);
      ASSERT_EQ(std::memcmp(&bulk[i], &one, sizeof one), 0)
          << half_name(kind) << " 0x" << std::hex << every[i];
    }
  }
}

TEST(Float16, DecodesSpecials) {
  EXPECT_EQ(half_to_double(0x7C00, Half::fp16), kInf);
  EXPECT_EQ(half_to_double(0xFF80, Half::bf16), -kInf);
  EXPECT_TRUE(std::isnan(half_to_double(0x7C01, Half::fp16)));
  EXPECT_TRUE(std::isnan(half_to_double(0xFFC0, Half::bf16)));
  EXPECT_TRUE(std::signbit(half_to_double(0x8000, Half::fp16)));
  EXPECT_EQ(half_to_double(0x0001, Half::fp16), p2(-24));
  EXPECT_EQ(half_to_double(0x0001, Half::bf16), p2(-133));
}

TEST(Float16, RejectsAKindOutsideTheEnum) {
  const auto bad = static_cast<Half>(2);
  EXPECT_EQ(invalid_argument_message([&] { half_name(bad); }),
            "half_name: kind = 2: must be Half::fp16 or Half::bf16");
  EXPECT_EQ(invalid_argument_message([&] { round_to_half(1.0, bad); }),
            "round_to_half: kind = 2: must be Half::fp16 or Half::bf16");
  EXPECT_EQ(invalid_argument_message([&] { round_float_to_half(1.0f, bad); }),
            "round_float_to_half: kind = 2: must be Half::fp16 or Half::bf16");
  EXPECT_EQ(invalid_argument_message([&] { half_to_double(0, bad); }),
            "half_to_double: kind = 2: must be Half::fp16 or Half::bf16");
  const uint16_t one = 0x3C00;
  EXPECT_EQ(invalid_argument_message([&] { halves_to_doubles(&one, 1, bad); }),
            "halves_to_doubles: kind = 2: must be Half::fp16 or Half::bf16");
}

}  // namespace
}  // namespace nvfp4::ref
