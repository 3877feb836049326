#include "harness/fast_divmod.h"

#include <gtest/gtest.h>

#include <random>

namespace nvh {
namespace {

TEST(FastDivmod, MatchesDivisionForEveryDivisorShapeAndLargeDividends) {
  std::mt19937 rng(1);
  std::vector<uint32_t> divisors;
  for (uint32_t d = 1; d <= 4096; ++d) divisors.push_back(d);
  for (int i = 0; i < 2000; ++i) divisors.push_back(1 + rng() % 0x7FFFFFFFu);
  for (uint32_t d : {65535u, 65536u, 65537u, 0x40000000u, 0x7FFFFFFFu}) divisors.push_back(d);
  for (uint32_t d : divisors) {
    const FastDivmod f = FastDivmod::make(d);
    for (uint32_t n : {0u, 1u, d - 1, d, d + 1, 2 * d - 1, 0x7FFFFFFFu, 0x7FFFFFFEu}) {
      if (n >= 0x80000000u) continue;
      ASSERT_EQ(f.div(n), n / d) << n << " / " << d;
    }
    for (int i = 0; i < 64; ++i) {
      const uint32_t n = rng() & 0x7FFFFFFFu;
      ASSERT_EQ(f.div(n), n / d) << n << " / " << d;
      ASSERT_EQ(f.mod(n, f.div(n)), n % d) << n << " % " << d;
    }
  }
}

TEST(FastDivmod, RefusesZero) { EXPECT_THROW(FastDivmod::make(0), std::invalid_argument); }

}  // namespace
}  // namespace nvh
