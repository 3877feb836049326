// The shared rounding core, checked directly on each format's grid.
#include "minifloat.h"

#include <gtest/gtest.h>

#include <cmath>

namespace nvfp4::ref::detail {
namespace {

TEST(MiniFloat, DecodesE2M1Grid) {
  const double grid[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint32_t code = 0; code < 8; ++code)
    EXPECT_EQ(decode_magnitude(code, kE2M1Format), grid[code]) << code;
}

TEST(MiniFloat, DecodesE4M3SubnormalsAndNormals) {
  EXPECT_EQ(decode_magnitude(0x01, kE4M3Format), std::ldexp(1.0, -9));  // smallest subnormal
  EXPECT_EQ(decode_magnitude(0x07, kE4M3Format), 7 * std::ldexp(1.0, -9));
  EXPECT_EQ(decode_magnitude(0x08, kE4M3Format), std::ldexp(1.0, -6));  // smallest normal
  EXPECT_EQ(decode_magnitude(0x38, kE4M3Format), 1.0);
  EXPECT_EQ(decode_magnitude(0x7E, kE4M3Format), 448.0);
}

// encode is decode's inverse on every finite pattern of every format (fp16: all 0x7C00 finite
// magnitudes; bf16: all 0x7F80).
TEST(MiniFloat, EncodeInvertsDecodeOnEveryFinitePattern) {
  struct Case {
    MiniFormat f;
    uint32_t finite_patterns;
  };
  for (const Case& c : {Case{kE2M1Format, 8}, Case{kE4M3Format, 0x7F}, Case{kFp16Format, 0x7C00},
                        Case{kBf16Format, 0x7F80}}) {
    for (uint32_t bits = 0; bits < c.finite_patterns; ++bits) {
      const double v = decode_magnitude(bits, c.f);
      ASSERT_EQ(encode_magnitude(v, c.f), bits) << "mantissa_bits " << c.f.mantissa_bits;
      ASSERT_EQ(round_magnitude(v, c.f), v);
    }
  }
}

TEST(MiniFloat, RoundsTiesToEvenMantissa) {
  EXPECT_EQ(round_magnitude(0.25, kE2M1Format), 0.0);  // 0 | 0.5: even is 0
  EXPECT_EQ(round_magnitude(0.75, kE2M1Format), 1.0);  // 0.5 | 1: even is 1 (code 2)
  EXPECT_EQ(round_magnitude(5.0, kE2M1Format), 4.0);   // 4 | 6: even is 4
  EXPECT_EQ(round_magnitude(7.0, kE2M1Format), 8.0);   // unbounded above: callers saturate
  EXPECT_EQ(round_magnitude(1.0 + std::ldexp(1.0, -11), kFp16Format), 1.0);
  EXPECT_EQ(round_magnitude(1.0 + 3 * std::ldexp(1.0, -11), kFp16Format),
            1.0 + std::ldexp(1.0, -9));
}

TEST(MiniFloat, RoundsBelowAndAcrossTheSubnormalBoundary) {
  const double q = std::ldexp(1.0, -9);  // E4M3 subnormal spacing
  EXPECT_EQ(round_magnitude(q / 2, kE4M3Format), 0.0);
  EXPECT_EQ(round_magnitude(std::nextafter(q / 2, 1.0), kE4M3Format), q);
  EXPECT_EQ(round_magnitude(7.5 * q, kE4M3Format), 8 * q);  // tie 7 | 8 -> 8, the smallest normal
  EXPECT_EQ(round_magnitude(std::ldexp(1.0, -40), kE4M3Format), 0.0);
}

}  // namespace
}  // namespace nvfp4::ref::detail
