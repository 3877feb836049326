// The checks of one case (matmul_case.h) on hand-made outputs: each passes
// the reference's own output and fails the defects it is there to catch,
// special values included (DESIGN.md, "Special values").
#include "properties/nvfp4_matmul/matmul_case.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "properties/nvfp4_matmul/families.h"
#include "reference/nvfp4_matmul/e4m3.h"
#include "reference/nvfp4_matmul/float16.h"
#include "reference/nvfp4_matmul/packing.h"

namespace nvfp4 {
namespace {

constexpr uint16_t kOne = 0x3C00, kInf = 0x7C00;  // fp16

// A case of N rows of weights, each row one E2M1 code per k and one scale
// per 16 values, the reference's output as the run's output.
struct Made {
  CaseSpec spec;
  CaseInputs in;
  Oracle oracle;
  CaseRun run;
};

Made make(DType t, int64_t M, int64_t N, int64_t K, std::vector<uint16_t> A,
          const std::vector<uint8_t>& codes, std::vector<uint8_t> scales, float g,
          Route route = Route::prefill_vec8) {
  Made m;
  m.spec = make_case("adhoc", M, N, K, 16, t, false);
  m.in.A = std::move(A);
  m.in.W.N = N;
  m.in.W.K = K;
  m.in.W.block_size = 16;
  m.in.W.packed = ref::pack_e2m1_rows(codes, N, K);
  m.in.W.scales = std::move(scales);
  m.in.W.global_scale = g;
  m.oracle = make_oracle(m.spec, m.in);
  m.run.decision.route = route;
  m.run.Y = m.oracle.y_rounded;
  return m;
}

// fp16, M = 2, N = 4, K = 16. A row 0 = [inf, 1 x 15], row 1 = [1, 2^-24, 1 x 13, 1024].
// W row 0: 1 but 0 at k = 1; row 1: NaN scale; row 2: 0 at k = 0 and 1, then 1; row 3: 2688.
//   Y[0,0] = +inf, Y[0,1] = NaN, Y[0,2] = inf * 0 = NaN, Y[0,3] = +inf (all determined);
//   Y[1,0] = 1038 and Y[1,2] = 1037 (exact), Y[1,1] = NaN, Y[1,3] = 2688 * (1038 + 2^-24):
//   2^21 next to a 2^-17 grid, rounded (and inf in fp16).
Made special_case() {
  std::vector<uint16_t> A(32, kOne);
  A[0] = kInf;
  A[16 + 1] = 0x0001;
  A[31] = 0x6400;
  std::vector<uint8_t> codes(64, 0x2);
  codes[1] = codes[32] = codes[33] = 0x0;
  for (int k = 48; k < 64; ++k) codes[k] = 0x7;
  return make(DType::fp16, 2, 4, 16, A, codes, {0x38, 0x7F, 0x38, 0x7E}, 1.0f);
}

TEST(CheckOutputBound, TheReferenceOutputPasses) {
  const Made m = special_case();
  using ref::SumOutcome;
  EXPECT_EQ(m.oracle.outcomes,
            (std::vector<SumOutcome>{SumOutcome::pos_inf, SumOutcome::nan, SumOutcome::nan,
                                     SumOutcome::pos_inf, SumOutcome::exact, SumOutcome::nan,
                                     SumOutcome::exact, SumOutcome::rounded}));
  EXPECT_EQ(m.oracle.y_rounded,
            (std::vector<uint16_t>{kInf, 0x7FFF, 0x7FFF, kInf, 0x640E, 0x7FFF, 0x640D, kInf}));
  EXPECT_EQ(check_output_bound(m.spec, m.in, m.run, m.oracle), "");
}

TEST(CheckOutputBound, ANaNOtherThan7FFFFails) {
  Made m = special_case();
  m.run.Y[1] = 0x7E00;
  EXPECT_EQ(check_output_bound(m.spec, m.in, m.run, m.oracle),
            "Y[0,1] = 0x7e00, expected 0x7fff: every NaN written is 0x7FFF");
}

TEST(CheckOutputBound, DeterminedOutcomesNeedTheReferenceBits) {
  Made m = special_case();
  m.run.Y[3] = 0x7BFF;  // +inf in every order, not the largest finite value
  EXPECT_EQ(check_output_bound(m.spec, m.in, m.run, m.oracle),
            "Y[0,3] = 0x7bff, expected 0x7c00: the sum's outcome is +inf in every order, so every "
            "route has the "
            "reference's bits");
  m = special_case();
  m.run.Y[2] = kInf;  // inf * 0 is NaN
  EXPECT_NE(check_output_bound(m.spec, m.in, m.run, m.oracle), "");
  m = special_case();
  m.run.Y[6] = 0x640C;  // an exact element one ulp off: within the bound, but not its bits
  EXPECT_EQ(check_output_bound(m.spec, m.in, m.run, m.oracle),
            "Y[1,2] = 0x640c, expected 0x640d: the sum's outcome is exact in every order, so every "
            "route has the "
            "reference's bits");
}

// Y[1,3] is rounded: an infinity passes (its fp32 value is far past 65520),
// a finite value, a NaN or the other infinity does not.
TEST(CheckOutputBound, RoundedElementsGetTheBoundAndInfinityWhereItReaches) {
  Made m = special_case();
  m.run.Y[7] = 0x7BFF;
  EXPECT_NE(check_output_bound(m.spec, m.in, m.run, m.oracle), "");
  m.run.Y[7] = 0x7FFF;
  EXPECT_NE(check_output_bound(m.spec, m.in, m.run, m.oracle), "");
  m.run.Y[7] = 0xFC00;
  EXPECT_NE(check_output_bound(m.spec, m.in, m.run, m.oracle), "");
}

// The bound's S is element [m, n]'s own: sum |A[m, k] * W[n, k]|. fp16, M = N
// = 2, K = 16, scales 1. A row 1 = [1024, 1024, 2^-14, 0...]; W row 0 = 1 at
// every k, W row 1 = [6, -6, 1, 0...]. Y[1,1] = 6144 - 6144 + 2^-14 cancels
// next to a 2^-14 grid (rounded), S = 12288 + 2^-14, so its bound is 18 *
// 2^-23 * S = 0.02637 (plus an ulp of 2^-24 and 18 * 2^-149): 0.02 passes and
// 0.03 fails. With the S of another row of W (2048 + 2^-14) 0.02 would fail.
TEST(CheckOutputBound, ARoundedElementsBoundIsItsOwnRowAndColumns) {
  std::vector<uint16_t> A(32, 0);
  A[0] = kOne;
  A[16] = A[17] = 0x6400;               // 1024
  A[18] = 0x0400;                       // 2^-14
  std::vector<uint8_t> codes(32, 0x2);  // row 0: 1.0
  for (int k = 16; k < 32; ++k) codes[k] = 0x0;
  codes[16] = 0x7;  // 6
  codes[17] = 0xF;  // -6
  codes[18] = 0x2;  // 1
  Made m = make(DType::fp16, 2, 2, 16, A, codes, {0x38, 0x38}, 1.0f);
  ASSERT_EQ(m.oracle.outcomes[3], ref::SumOutcome::rounded);
  ASSERT_EQ(m.oracle.y64[3], 0x1p-14);
  m.run.Y[3] = ref::round_to_half(0.02, ref::Half::fp16);
  EXPECT_EQ(check_output_bound(m.spec, m.in, m.run, m.oracle), "");
  m.run.Y[3] = ref::round_to_half(0.03, ref::Half::fp16);
  const std::string e = check_output_bound(m.spec, m.in, m.run, m.oracle);
  EXPECT_EQ(e.rfind("Y[1,1] = ", 0), 0u) << e;
  EXPECT_NE(e.find("exceeds the bound 0.0263"), std::string::npos) << e;
}

// bf16, A = 2^120: products 2^120 * 2688 overflow fp32, so the outcome is
// "overflow" and a route may write a finite value, an infinity or NaN.
TEST(CheckOutputBound, OverflowingSumsAcceptInfinityAndNaN) {
  const uint16_t big = ref::round_to_half(0x1p120, ref::Half::bf16);
  Made m = make(DType::bf16, 1, 1, 16, std::vector<uint16_t>(16, big),
                std::vector<uint8_t>(16, 0x7), {0x7E}, 1.0f);
  EXPECT_EQ(m.oracle.outcomes, std::vector<ref::SumOutcome>{ref::SumOutcome::overflow});
  for (uint16_t y : {uint16_t{0x7F80}, uint16_t{0xFF80}, uint16_t{0x7FFF}}) {
    m.run.Y[0] = y;
    EXPECT_EQ(check_output_bound(m.spec, m.in, m.run, m.oracle), "") << std::hex << y;
  }
  m.run.Y[0] = 0x7FC0;
  EXPECT_NE(check_output_bound(m.spec, m.in, m.run, m.oracle), "");
}

// Zero weights pass only where weight_scale_2 makes them zero.
TEST(CheckNonzero, ZeroWeightsOnlyWhereWeightScale2ExplainsThem) {
  const std::vector<uint16_t> A(16, kOne);
  for (float g : {0.0f, -0.0f, 0x1p-40f}) {
    const Made m = make(DType::fp16, 1, 1, 16, A, std::vector<uint8_t>(16, 0x2), {0x38}, g);
    EXPECT_EQ(check_nonzero(m.spec, m.in, m.run, m.oracle), "") << g;
  }
  const Made zero_scales =
      make(DType::fp16, 1, 1, 16, A, std::vector<uint8_t>(16, 0x2), {0x00}, 1.0f);
  EXPECT_EQ(check_nonzero(zero_scales.spec, zero_scales.in, zero_scales.run, zero_scales.oracle),
            "weight_scale is all zero");
  const Made zero_codes =
      make(DType::fp16, 1, 1, 16, A, std::vector<uint8_t>(16, 0x8), {0x38}, 1.0f);
  EXPECT_EQ(check_nonzero(zero_codes.spec, zero_codes.in, zero_codes.run, zero_codes.oracle),
            "B's codes are all zero");
  // 2^-20 leaves 6 * 448 * 2^-20 = 2^-8.4, an fp16 value: zero weights need another reason.
  Made small = make(DType::fp16, 1, 1, 16, A, std::vector<uint8_t>(16, 0x2), {0x01}, 0x1p-20f);
  EXPECT_EQ(check_nonzero(small.spec, small.in, small.run, small.oracle), "W is all zero");
}

// The value_class family's class targets name every (class, route) pair no
// passing case ran.
TEST(ClassTargets, NameEveryPairThatNoPassingCaseRan) {
  const Family* f = find_family("value_class");
  ASSERT_NE(f, nullptr);
  std::vector<ClassRun> runs;
  for (const ClassTarget& t : f->class_targets) runs.push_back({t.value_class, t.routes});
  EXPECT_EQ(check_class_targets(*f, runs), "");
  runs.erase(runs.begin());
  runs.back().routes.pop_back();
  const std::string problems = check_class_targets(*f, runs);
  EXPECT_NE(problems.find("no passing case ran value class a_nan on gemv_mma"), std::string::npos)
      << problems;
  EXPECT_NE(problems.find("no passing case ran value class bias_nan on empty"), std::string::npos)
      << problems;
  EXPECT_EQ(problems.find("value class g_nan"), std::string::npos) << problems;
}

}  // namespace
}  // namespace nvfp4
