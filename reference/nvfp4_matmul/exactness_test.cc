// The exactness rule: one power-of-two grid, sum of magnitudes below 2^24 units, no overflow.
#include "exactness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "test_util.h"

namespace nvfp4::ref {
namespace {

using testing::halves;
using testing::invalid_argument_message;

// A = [[1, 2], [3, 4]], W = [[1, 1], [2, -1]]. Units are counted on each element's own grid:
// Y[1,1] = 6 - 4 is 3 + 2 = 5 units of 2^1; Y[1,0] = 3 + 4 is 7 units of 2^0, the most.
TEST(Exactness, SmallIntegersAreExact) {
  const auto A = halves({1, 2, 3, 4}, Half::fp16);
  const auto W = halves({1, 1, 2, -1}, Half::fp16);
  const ExactnessReport r = analyze_exactness(A.data(), W.data(), nullptr, 2, 2, 2, Half::fp16);
  EXPECT_TRUE(r.exact) << r.why;
  EXPECT_EQ(r.worst_m, 1);
  EXPECT_EQ(r.worst_n, 0);
  EXPECT_DOUBLE_EQ(r.worst_bits, std::log2(7.0));
  EXPECT_EQ(r.why, "");
}

// Terms 2^0 .. 2^23 (each a product of fp16 powers of two) sum to 2^24 - 1 units: exact, the
// largest sum the rule allows. One more unit reaches 2^24: not exact.
std::vector<double> powers_a() {
  std::vector<double> a;
  for (int i = 0; i < 24; ++i) a.push_back(std::ldexp(1.0, std::min(i, 11)));
  return a;
}
std::vector<double> powers_w() {
  std::vector<double> w;
  for (int i = 0; i < 24; ++i) w.push_back(std::ldexp(1.0, i - std::min(i, 11)));
  return w;
}

std::vector<uint16_t> to_fp16(const std::vector<double>& v) {
  std::vector<uint16_t> out;
  for (double x : v) out.push_back(round_to_half(x, Half::fp16));
  return out;
}

TEST(Exactness, TwoToThe24MinusOneUnitsIsTheLimit) {
  const auto A = to_fp16(powers_a()), W = to_fp16(powers_w());
  const ExactnessReport r = analyze_exactness(A.data(), W.data(), nullptr, 1, 1, 24, Half::fp16);
  EXPECT_TRUE(r.exact) << r.why;
  EXPECT_LT(r.worst_bits, 24.0);
  EXPECT_GT(r.worst_bits, 23.99);
}

TEST(Exactness, ATermReachingTwoToThe24UnitsIsNotExactAndNamesTheElement) {
  // Row 0 of A is harmless; row 1 carries the 2^0..2^23 terms, and the bias adds one unit.
  std::vector<double> a(24, 0.0);
  const std::vector<double> p = powers_a();
  a.insert(a.end(), p.begin(), p.end());
  const auto A = to_fp16(a), W = to_fp16(powers_w());
  const auto bias = halves({1}, Half::fp16);
  const ExactnessReport r =
      analyze_exactness(A.data(), W.data(), bias.data(), 2, 1, 24, Half::fp16);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.worst_m, 1);
  EXPECT_EQ(r.worst_n, 0);
  EXPECT_EQ(r.worst_bits, 24.0);
  EXPECT_EQ(r.why, "Y[1,0]: sum of |terms| = 16777216 units of 2^0 (24 bits) >= 2^24");
}

// A fractional term sets the grid for the whole element.
TEST(Exactness, AFractionalTermLowersTheGrid) {
  const auto A = halves({0.5, 3}, Half::fp16);
  const auto W = halves({0.5, 1}, Half::fp16);
  const ExactnessReport r = analyze_exactness(A.data(), W.data(), nullptr, 1, 1, 2, Half::fp16);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.worst_bits, std::log2(13.0));  // 0.25 + 3 = 13 units of 2^-2
}

// A term of 2^24 units: 4096 * 4096 next to a 1 * 1 term (grid 2^0) in Y[0,1]; the other
// elements are small. The report names Y[0,1].
TEST(Exactness, ATermOfTwoToThe24UnitsIsNotExact) {
  const auto A = halves({4096, 1}, Half::fp16);              // M = 1, K = 2
  const auto W = halves({1, 1, 4096, 1, 2, 2}, Half::fp16);  // N = 3
  const ExactnessReport r = analyze_exactness(A.data(), W.data(), nullptr, 1, 3, 2, Half::fp16);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.worst_m, 0);
  EXPECT_EQ(r.worst_n, 1);
  EXPECT_EQ(r.why, "Y[0,1]: sum of |terms| = 16777217 units of 2^0 (24.0000001 bits) >= 2^24");
  // The same 2^24 on a 2^-4 grid (a 0.25 * 0.25 term) is 2^28 units.
  const auto B = halves({0.25, 4096}, Half::fp16);
  const auto V = halves({0.25, 4096}, Half::fp16);
  const ExactnessReport s = analyze_exactness(B.data(), V.data(), nullptr, 1, 1, 2, Half::fp16);
  EXPECT_FALSE(s.exact);
  EXPECT_EQ(s.why, "Y[0,0]: sum of |terms| = 268435457 units of 2^-4 (28 bits) >= 2^24");
}

TEST(Exactness, GridBelowTheFp32SpacingIsNotExact) {
  const auto A = halves({std::ldexp(1.0, -100)}, Half::bf16);
  const auto W = halves({std::ldexp(1.0, -60)}, Half::bf16);
  const ExactnessReport r = analyze_exactness(A.data(), W.data(), nullptr, 1, 1, 1, Half::bf16);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.worst_bits, std::numeric_limits<double>::infinity());
  EXPECT_EQ(
      r.why,
      "Y[0,0]: term grid 2^-160 is below 2^-142 (fp32's spacing 2^-149 times gemv_mma's 2^7)");
}

// The grid limit is 2^-142, not fp32's 2^-149: gemv_mma's bf16 fast path sums the products
// up to 2^7 times smaller (DESIGN.md, "Special values").
TEST(Exactness, TheGridLimitIsTwoToTheMinus142) {
  const auto A = halves({std::ldexp(1.0, -100)}, Half::bf16);
  for (int e : {-42, -43}) {
    const auto W = halves({std::ldexp(1.0, e)}, Half::bf16);
    const ExactnessReport r = analyze_exactness(A.data(), W.data(), nullptr, 1, 1, 1, Half::bf16);
    EXPECT_EQ(r.exact, e == -42) << r.why;
    EXPECT_EQ(r.outcomes,
              std::vector<SumOutcome>{e == -42 ? SumOutcome::exact : SumOutcome::rounded});
  }
}

TEST(Exactness, OverflowingFp32IsNotExact) {
  const auto A = halves({std::ldexp(1.0, 100)}, Half::bf16);
  const auto W = halves({std::ldexp(1.0, 30)}, Half::bf16);
  const ExactnessReport r = analyze_exactness(A.data(), W.data(), nullptr, 1, 1, 1, Half::bf16);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.why, "Y[0,0]: sum of |terms| = 1.36112947e+39 overflows fp32");
}

// Non-finite terms leave exactness to the finite ones: with those exact, NaN and infinities
// come out the same in every order. Y[0,0] = 1*1 + 2*1, Y[1,0] = 3*1 + inf*1.
TEST(Exactness, NonFiniteTermsLeaveTheVerdictToTheFiniteOnes) {
  const auto A = halves({1, 2, 3, std::numeric_limits<double>::infinity()}, Half::fp16);
  const auto W = halves({1, 1}, Half::fp16);
  const ExactnessReport r = analyze_exactness(A.data(), W.data(), nullptr, 2, 1, 2, Half::fp16);
  EXPECT_TRUE(r.exact) << r.why;
  EXPECT_EQ(r.outcomes, (std::vector<SumOutcome>{SumOutcome::exact, SumOutcome::pos_inf}));
  const auto bias = halves({std::numeric_limits<double>::quiet_NaN()}, Half::fp16);
  const ExactnessReport b = analyze_exactness(A.data(), W.data(), bias.data(), 2, 1, 2, Half::fp16);
  EXPECT_TRUE(b.exact) << b.why;
  EXPECT_EQ(b.outcomes, (std::vector<SumOutcome>{SumOutcome::nan, SumOutcome::nan}));
}

// Every outcome, one element each (M = 1, K = 2, N = 7, bf16 so products can overflow fp32):
// +inf and -inf: NaN; inf * 0 (also * -0): NaN; -inf or +inf with finite terms that cannot
// overflow: that infinity. Then, with A = [2^120, 2^120]: finite terms that could overflow:
// anything, an infinite bias included; an inexact finite sum: rounded; zeros only: exact (+0).
TEST(Exactness, OutcomesOfEverySpecialTerm) {
  const double inf = std::numeric_limits<double>::infinity(), big = std::ldexp(1.0, 120);
  const auto A = halves({inf, 1}, Half::bf16);
  const auto B = halves({big, big}, Half::bf16);
  struct Row {
    double w0, w1;
    SumOutcome want;
  };
  const Row rows[] = {
      {1, -inf, SumOutcome::nan},      {0, 1, SumOutcome::nan},
      {-1, 3, SumOutcome::neg_inf},    {1, std::ldexp(1.0, 127), SumOutcome::pos_inf},
      {0.5, 0.5, SumOutcome::pos_inf}, {-0.0, 0, SumOutcome::nan}};
  for (const Row& row : rows) {
    const auto W = halves({row.w0, row.w1}, Half::bf16);
    const ExactnessReport r = analyze_exactness(A.data(), W.data(), nullptr, 1, 1, 2, Half::bf16);
    EXPECT_EQ(r.outcomes, std::vector<SumOutcome>{row.want}) << row.w0 << " " << row.w1;
  }
  // A = [2^120, 2^120]: with W = [2^7, 2^7] the finite terms reach 2^128 (overflow, and with an
  // inf bias still overflow); with W = [1, 1 + 2^-7] they need 9 bits over a 2^113 grid
  // (exact); with W = [1, 2^-60] 180 bits (rounded).
  const auto W1 = halves({128, 128}, Half::bf16);
  const auto inf_bias = halves({inf}, Half::bf16);
  EXPECT_EQ(analyze_exactness(B.data(), W1.data(), nullptr, 1, 1, 2, Half::bf16).outcomes,
            std::vector<SumOutcome>{SumOutcome::overflow});
  EXPECT_EQ(analyze_exactness(B.data(), W1.data(), inf_bias.data(), 1, 1, 2, Half::bf16).outcomes,
            std::vector<SumOutcome>{SumOutcome::overflow});
  const auto W2 = halves({1, 1 + std::ldexp(1.0, -7)}, Half::bf16);
  EXPECT_EQ(analyze_exactness(B.data(), W2.data(), nullptr, 1, 1, 2, Half::bf16).outcomes,
            std::vector<SumOutcome>{SumOutcome::exact});
  const auto W3 = halves({1, std::ldexp(1.0, -60)}, Half::bf16);
  EXPECT_EQ(analyze_exactness(B.data(), W3.data(), nullptr, 1, 1, 2, Half::bf16).outcomes,
            std::vector<SumOutcome>{SumOutcome::rounded});
  const auto Z = halves({-0.0, 0}, Half::bf16);
  EXPECT_EQ(analyze_exactness(Z.data(), Z.data(), nullptr, 1, 1, 2, Half::bf16).outcomes,
            std::vector<SumOutcome>{SumOutcome::exact});
  for (SumOutcome o :
       {SumOutcome::nan, SumOutcome::pos_inf, SumOutcome::neg_inf, SumOutcome::exact}) {
    EXPECT_TRUE(outcome_is_determined(o)) << sum_outcome_name(o);
  }
  EXPECT_FALSE(outcome_is_determined(SumOutcome::rounded));
  EXPECT_FALSE(outcome_is_determined(SumOutcome::overflow));
}

// A failing element outranks a passing one with more bits.
TEST(Exactness, AFailureOutranksAnyPassingElement) {
  const auto A = halves({1000, std::ldexp(1.0, -100)}, Half::bf16);
  const auto W = halves({1000, std::ldexp(1.0, -60)}, Half::bf16);
  // M = 2, K = 1, N = 2: Y[0,0] = 10^6 (exact, ~20 bits), Y[1,1] = 2^-160 (not exact).
  const ExactnessReport r = analyze_exactness(A.data(), W.data(), nullptr, 2, 2, 1, Half::bf16);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.worst_m, 1);
  EXPECT_EQ(r.worst_n, 1);
}

TEST(Exactness, ZerosAndEmptyShapes) {
  const auto Z = halves({0, -0.0}, Half::fp16);
  const ExactnessReport z = analyze_exactness(Z.data(), Z.data(), nullptr, 1, 1, 2, Half::fp16);
  EXPECT_TRUE(z.exact);
  EXPECT_EQ(z.worst_bits, 0.0);
  const std::vector<uint16_t> W(15, 0x3C00);  // read by nobody, but it is a non-empty [3, 5] input
  const ExactnessReport e = analyze_exactness(nullptr, W.data(), nullptr, 0, 3, 5, Half::fp16);
  EXPECT_TRUE(e.exact);
  EXPECT_EQ(e.worst_m, -1);
  EXPECT_EQ(e.worst_n, -1);
}

TEST(Exactness, RejectsBadArguments) {
  const uint16_t x[4] = {};
  EXPECT_EQ(
      invalid_argument_message([&] { analyze_exactness(x, x, nullptr, -1, 1, 1, Half::fp16); }),
      "analyze_exactness: M = -1: must be non-negative");
  EXPECT_EQ(
      invalid_argument_message([&] { analyze_exactness(x, x, nullptr, 1, -1, 1, Half::fp16); }),
      "analyze_exactness: N = -1: must be non-negative");
  EXPECT_EQ(
      invalid_argument_message([&] { analyze_exactness(x, x, nullptr, 1, 1, -1, Half::fp16); }),
      "analyze_exactness: K = -1: must be non-negative");
  EXPECT_EQ(invalid_argument_message(
                [&] { analyze_exactness(x, x, nullptr, 1, 1, 1, static_cast<Half>(4)); }),
            "analyze_exactness: kind = 4: must be Half::fp16 or Half::bf16");
  EXPECT_EQ(invalid_argument_message([&] {
              analyze_exactness(x, x, nullptr, int64_t{1} << 40, 1, int64_t{1} << 40, Half::fp16);
            }),
            "analyze_exactness: M*K = 1099511627776*1099511627776: overflows a 64-bit product");
  EXPECT_EQ(invalid_argument_message([&] {
              analyze_exactness(x, x, nullptr, 1, int64_t{1} << 40, int64_t{1} << 40, Half::fp16);
            }),
            "analyze_exactness: N*K = 1099511627776*1099511627776: overflows a 64-bit product");
  EXPECT_EQ(invalid_argument_message([&] {
              analyze_exactness(x, x, nullptr, int64_t{1} << 32, int64_t{1} << 32, 0, Half::fp16);
            }),
            "analyze_exactness: M*N = 4294967296*4294967296: overflows a 64-bit product");
  EXPECT_EQ(invalid_argument_message(
                [&] { analyze_exactness(nullptr, x, nullptr, 2, 1, 2, Half::fp16); }),
            "analyze_exactness: A = nullptr: must point to 4 elements");
  EXPECT_EQ(invalid_argument_message(
                [&] { analyze_exactness(x, nullptr, nullptr, 1, 2, 2, Half::fp16); }),
            "analyze_exactness: W = nullptr: must point to 4 elements");
}

}  // namespace
}  // namespace nvfp4::ref
