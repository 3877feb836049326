// gemv_mma's sliced layout (gemv_mma_slices.cuh, then prefill_fused_sum.cuh):
// the plan that picks it (a function of M, N and K alone), then the route
// on every backend this build has where the plan slices K, against the
// reference: both dtypes, bias on and off, the fast and the contract path,
// 16-byte and 4-byte scale copies, a last half stage, warps past the last
// tile, rows past N, columns past M, special values, and the same bits as
// the route's own layout in exact mode.
#include "kernels/nvfp4_matmul/gemv_mma_slices.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "harness/backend_fixture.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "kernels/nvfp4_matmul/prefill_fused_plan.h"
#include "properties/nvfp4_matmul/matmul_case.h"
#include "properties/nvfp4_matmul/value_class.h"

namespace nvfp4 {
namespace {

// Where the layout was measured (PERF.md: 5120 x 25600 on the H200) and
// where it is not taken.
TEST(GemvMmaSlicesPlan, SlicesLongKWhereTheRoutesBlocksFallShortOfAWave) {
  struct Case {
    int64_t M, N, K;
    uint32_t slices;
    const char* why;
  };
  const Case cases[] = {
      {1, 5120, 25600, 9, "40 groups: 9 slices fill one wave (360 of 396 blocks)"},
      {4, 5120, 25600, 9, "A's slice of 12 stages fits at M = 4"},
      {8, 5120, 25600, 19, "at M = 8 a one-wave slice of A does not fit: two waves"},
      {3, 40, 12288, 12, "one group: slices of kMinSliceStages (48 stages / 4)"},
      {1, 4096, 14336, 12, "32 groups: 12 slices fill one wave (384 blocks)"},
      {8, 4096, 12288 - 256, 1, "47 stages: below kMinStagesToSlice"},
      {8, 248320, 2048, 1, "the lm_head: short K and tiles enough"},
      {8, 14336, 14336, 1, "896 tiles at split 4 are 448 blocks: a wave already"},
      {9, 5120, 25600, 1, "M > 8 is not gemv_mma's"},
      {0, 5120, 25600, 1, "no rows"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(GemvMmaSlices::slices_for(c.M, c.N, c.K), c.slices)
        << "M = " << c.M << ", N = " << c.N << ", K = " << c.K << ": " << c.why;
  }
}

// Every slice streams a stage or more, and the slices cover K's stages once, in order.
TEST(GemvMmaSlicesPlan, SlicesCoverTheStagesOnceInOrder) {
  for (int64_t stages : {32, 33, 100}) {
    for (int64_t slices : {2, 7, 9, 19}) {
      int64_t next = 0;
      for (int64_t s = 0; s < slices; ++s) {
        const int64_t first = GemvMmaSlices::slice_start(stages, slices, s),
                      end = GemvMmaSlices::slice_start(stages, slices, s + 1);
        EXPECT_EQ(first, next) << stages << " stages, slice " << s << " of " << slices;
        EXPECT_GT(end, first) << stages << " stages, slice " << s << " of " << slices;
        EXPECT_LE(end - first, GemvMmaSlices::longest_slice(stages * GemvMma::kStageK, slices));
        next = end;
      }
      EXPECT_EQ(next, stages) << slices << " slices";
    }
  }
}

class GemvSlicesOnBackend : public nvh::OnBackend {};

// Runs the case on the route that slices it (gemv_mma, forced, for M <= 8;
// prefill_fused's GEMV-shaped path above, as dispatched), checks that the
// plan sliced it, and checks it as the property suites do.
CaseRun run_sliced(nvh::Backend& backend, CaseSpec spec) {
  const bool gemv = spec.M <= GemvMmaSlices::kMaxM;
  if (gemv) spec.options.force_route = Route::gemv_mma;
  const CaseInputs in = make_inputs(spec);
  const Oracle oracle = make_oracle(spec, in);
  const CaseRun run = run_case(backend, spec, in);
  const uint32_t slices = gemv ? GemvMmaSlices::slices_for(spec.M, spec.N, spec.K)
                               : GemvMmaSlices16::slices_for(spec.M, spec.N, spec.K);
  EXPECT_GT(slices, 1u) << spec.name() << ": the plan does not slice it";
  EXPECT_EQ(run.decision.route, gemv ? Route::gemv_mma : Route::prefill_fused) << spec.name();
  EXPECT_EQ(run.decision.variant,
            (gemv ? "m16n8k16/slices" : "gemv16/slices") + std::to_string(slices))
      << spec.name();
  EXPECT_EQ(check_output_bound(spec, in, run, oracle), "") << spec.name();
  EXPECT_EQ(check_guards(run), "") << spec.name();
  if (spec.value_class == ValueClass::none) {
    EXPECT_EQ(check_nonzero(spec, in, run, oracle), "") << spec.name();
  }
  if (spec.exact) {
    EXPECT_EQ(check_output_exact(run, oracle), "") << spec.name();
  }
  return run;
}

constexpr int64_t kLongK = GemvMmaSlices::kMinStagesToSlice * GemvMma::kStageK;  // 12288

TEST_P(GemvSlicesOnBackend, MatchesTheReferenceWhereThePlanSlicesK) {
  auto& b = backend();
  // One group, three tiles (warps past the last, rows past N), M < 8.
  run_sliced(b, make_case("adhoc", 3, 40, kLongK, 16, DType::bf16, true, true, 1));
  // A last half stage (4-byte scale copies), M = 8, no bias.
  run_sliced(b, make_case("adhoc", 8, 16, kLongK + 128, 16, DType::fp16, false, true, 2));
  // Two groups of 8 tiles, not exact (the bound), M = 1.
  run_sliced(b, make_case("adhoc", 1, 144, kLongK, 16, DType::fp16, true, false, 3));
  run_sliced(b, make_case("adhoc", 5, 136, kLongK + 256, 16, DType::bf16, true, false, 4));
  // Scales 4 bytes past 16-byte alignment: 4-byte copies with whole stages.
  CaseSpec narrow = make_case("adhoc", 6, 24, kLongK, 16, DType::bf16, true, true, 5);
  narrow.scales_offset = 4;
  run_sliced(b, narrow);
  // The contract path (g not a power of two) and g's special values, both dtypes.
  for (ValueClass c : {ValueClass::g_not_pow2, ValueClass::g_nan, ValueClass::g_huge,
                       ValueClass::a_nan, ValueClass::scale_nan_7f, ValueClass::a_neg_zero}) {
    for (DType t : {DType::fp16, DType::bf16}) {
      CaseSpec s = make_case("adhoc", 2, 24, kLongK, 16, t, true, false, 6);
      s.value_class = c;
      run_sliced(b, s);
    }
  }
}

// The parts are added in slice order, whatever order the blocks finish in:
// a case that is not exact (so the order of the additions shows in the
// bits) gives the same digest run after run.
TEST_P(GemvSlicesOnBackend, GivesTheSameBitsRunAfterRun) {
  auto& b = backend();
  const CaseSpec spec = make_case("adhoc", 7, 72, kLongK, 16, DType::bf16, true, false, 7);
  const CaseRun first = run_sliced(b, spec);
  const CaseRun second = run_sliced(b, spec);
  EXPECT_EQ(first.y_sha256, second.y_sha256);
}

// prefill_fused's GEMV-shaped path (two groups of A's rows, 8 < M <=
// kMaxFusedM): the plan takes it, and the route matches the reference at
// its edges, both paths, special values.
TEST(GemvMmaSlicesPlan, PrefillFusedTakesTheGemvShapedPathUpToItsM) {
  EXPECT_EQ(GemvMmaSlices16::slices_for(9, 4096, 14336), 12u);  // one wave: 32 groups x 12
  EXPECT_EQ(GemvMmaSlices16::slices_for(9, 14336, 4096), 3u);   // 112 groups x 3
  EXPECT_EQ(GemvMmaSlices16::slices_for(12, 4096, 4096), 4u);   // 16 stages: slices of 4
  EXPECT_EQ(GemvMmaSlices16::slices_for(12, 14336, 4096),
            4u);  // A's slice of 6 stages too large: two waves
  EXPECT_EQ(GemvMmaSlices16::slices_for(13, 4096, 4096), 1u);  // past kMaxFusedM
  EXPECT_EQ(GemvMmaSlices16::slices_for(8, 4096, 4096), 1u);   // gemv_mma's M
  EXPECT_EQ(GemvMmaSlices16::slices_for(9, 4096, 1792), 1u);   // 7 stages: no 2 slices of 4
  EXPECT_EQ(GemvMmaSlices16::slices_for(12, 14336, 14336),
            1u);  // 1 slice of 56 stages a wave: A's slice too large
  EXPECT_STREQ(prefill_fused_variant_name(prefill_fused_plan(9, 14336, 4096, true)),
               "gemv16/slices3");
}

TEST_P(GemvSlicesOnBackend, PrefillFusedGemvPathMatchesTheReference) {
  auto& b = backend();
  // M = 9 (one row in the second group), two groups of 8 tiles, rows past N.
  run_sliced(b, make_case("adhoc", 9, 136, 2048, 16, DType::bf16, true, true, 1));
  // M = kMaxFusedM, a last half stage (4-byte scale copies), not exact.
  run_sliced(b, make_case("adhoc", GemvMmaSlices16::kMaxFusedM, 24, 2048 + 128, 16, DType::fp16,
                          false, false, 2));
  run_sliced(b, make_case("adhoc", 11, 40, 4096, 16, DType::fp16, true, true, 3));
  for (ValueClass c : {ValueClass::g_not_pow2, ValueClass::g_inf, ValueClass::a_inf,
                       ValueClass::scale_nan_ff, ValueClass::bias_nan}) {
    for (DType t : {DType::fp16, DType::bf16}) {
      CaseSpec s = make_case("adhoc", 10, 24, 2048, 16, t, true, false, 4);
      s.value_class = c;
      run_sliced(b, s);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, GemvSlicesOnBackend, ::testing::ValuesIn(nvh::backend_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace nvfp4
