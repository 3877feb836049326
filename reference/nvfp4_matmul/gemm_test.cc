// The fp64 reference GEMM on hand-checked cases, and its argument checks.
#include "gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "test_util.h"

namespace nvfp4::ref {
namespace {

using testing::halves;
using testing::invalid_argument_message;

// A = [[1, 2, 3], [-1, 0.5, 4]], W = [[1, 0, -1], [2, 2, 2]] (N = 2 rows of K = 3).
// Y = A W^T = [[1 - 3, 2 + 4 + 6], [-1 - 4, -2 + 1 + 8]] = [[-2, 12], [-5, 7]].
TEST(Gemm, HandCheckedWithoutBias) {
  for (Half kind : {Half::fp16, Half::bf16}) {
    const auto A = halves({1, 2, 3, -1, 0.5, 4}, kind);
    const auto W = halves({1, 0, -1, 2, 2, 2}, kind);
    EXPECT_EQ(gemm_fp64(A.data(), W.data(), nullptr, 2, 2, 3, kind),
              (std::vector<double>{-2, 12, -5, 7}));
  }
}

TEST(Gemm, BiasIsAddedPerColumn) {
  const auto A = halves({1, 2, 3, -1, 0.5, 4}, Half::fp16);
  const auto W = halves({1, 0, -1, 2, 2, 2}, Half::fp16);
  const auto bias = halves({0.25, -100}, Half::fp16);
  EXPECT_EQ(gemm_fp64(A.data(), W.data(), bias.data(), 2, 2, 3, Half::fp16),
            (std::vector<double>{-1.75, -88, -4.75, -93}));
}

// Products and these sums are exact in fp64: 2047/1024 squared needs 22 significant bits, and
// adding 2^-30 needs 52, which fp16 and fp32 results could not hold.
TEST(Gemm, SumsOfProductsAreExactInFp64) {
  const auto A = halves({2047.0 / 1024, std::ldexp(1.0, -15)}, Half::fp16);
  const auto W = halves({2047.0 / 1024, std::ldexp(1.0, -15)}, Half::fp16);
  EXPECT_EQ(gemm_fp64(A.data(), W.data(), nullptr, 1, 1, 2, Half::fp16)[0],
            (2047.0 * 2047.0) / (1024.0 * 1024.0) + std::ldexp(1.0, -30));
}

TEST(Gemm, EmptyShapes) {
  const auto bias = halves({1.5, -2}, Half::bf16);
  // K == 0: Y = bias (the "empty" route's zero-fill plus bias).
  EXPECT_EQ(gemm_fp64(nullptr, nullptr, bias.data(), 3, 2, 0, Half::bf16),
            (std::vector<double>{1.5, -2, 1.5, -2, 1.5, -2}));
  EXPECT_EQ(gemm_fp64(nullptr, nullptr, nullptr, 2, 2, 0, Half::bf16), std::vector<double>(4, 0.0));
  // M == 0 or N == 0: no output, but the other operand is still a non-empty input.
  const std::vector<uint16_t> ones(35, 0x3C00);
  EXPECT_TRUE(gemm_fp64(nullptr, ones.data(), nullptr, 0, 5, 7, Half::fp16).empty());
  EXPECT_TRUE(gemm_fp64(ones.data(), nullptr, nullptr, 5, 0, 7, Half::fp16).empty());
}

TEST(Gemm, NonFiniteInputsPropagate) {
  const auto A = halves({std::numeric_limits<double>::infinity(), 1}, Half::fp16);
  const auto W = halves({1, 1, 0, 1}, Half::fp16);
  const std::vector<double> y = gemm_fp64(A.data(), W.data(), nullptr, 1, 2, 2, Half::fp16);
  EXPECT_EQ(y[0], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(y[1]));  // inf * 0
}

TEST(Gemm, RoundOutputRoundsEachElementOnce) {
  EXPECT_EQ(round_output({1.0, 65520.0, -0.0, 1 + std::ldexp(1.0, -11)}, Half::fp16),
            (std::vector<uint16_t>{0x3C00, 0x7C00, 0x8000, 0x3C00}));
  EXPECT_EQ(round_output({1.0, 1 + std::ldexp(1.0, -8)}, Half::bf16),
            (std::vector<uint16_t>{0x3F80, 0x3F80}));
  EXPECT_EQ(invalid_argument_message([] { round_output({1.0}, static_cast<Half>(3)); }),
            "round_output: kind = 3: must be Half::fp16 or Half::bf16");
}

TEST(Gemm, RejectsBadArguments) {
  const uint16_t x[4] = {};
  EXPECT_EQ(invalid_argument_message([&] { gemm_fp64(x, x, nullptr, -1, 1, 1, Half::fp16); }),
            "gemm_fp64: M = -1: must be non-negative");
  EXPECT_EQ(invalid_argument_message([&] { gemm_fp64(x, x, nullptr, 1, -1, 1, Half::fp16); }),
            "gemm_fp64: N = -1: must be non-negative");
  EXPECT_EQ(invalid_argument_message([&] { gemm_fp64(x, x, nullptr, 1, 1, -1, Half::fp16); }),
            "gemm_fp64: K = -1: must be non-negative");
  EXPECT_EQ(
      invalid_argument_message([&] { gemm_fp64(x, x, nullptr, 1, 1, 1, static_cast<Half>(5)); }),
      "gemm_fp64: kind = 5: must be Half::fp16 or Half::bf16");
  EXPECT_EQ(invalid_argument_message([&] {
              gemm_fp64(x, x, nullptr, int64_t{1} << 40, 1, int64_t{1} << 40, Half::fp16);
            }),
            "gemm_fp64: M*K = 1099511627776*1099511627776: overflows a 64-bit product");
  EXPECT_EQ(invalid_argument_message([&] {
              gemm_fp64(x, x, nullptr, 1, int64_t{1} << 40, int64_t{1} << 40, Half::fp16);
            }),
            "gemm_fp64: N*K = 1099511627776*1099511627776: overflows a 64-bit product");
  // K == 0 makes M*K and N*K zero; M*N still overflows.
  EXPECT_EQ(invalid_argument_message([&] {
              gemm_fp64(x, x, nullptr, int64_t{1} << 32, int64_t{1} << 32, 0, Half::fp16);
            }),
            "gemm_fp64: M*N = 4294967296*4294967296: overflows a 64-bit product");
  EXPECT_EQ(invalid_argument_message([&] { gemm_fp64(nullptr, x, nullptr, 2, 1, 2, Half::fp16); }),
            "gemm_fp64: A = nullptr: must point to 4 elements");
  EXPECT_EQ(invalid_argument_message([&] { gemm_fp64(x, nullptr, nullptr, 1, 2, 2, Half::fp16); }),
            "gemm_fp64: W = nullptr: must point to 4 elements");
}

}  // namespace
}  // namespace nvfp4::ref
