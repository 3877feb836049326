#include "kernels/nvfp4_matmul/dispatch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace nvfp4 {
namespace {

Problem problem(int64_t M, int64_t N, int64_t K, int64_t bs) {
  Problem p;
  p.M = M;
  p.N = N;
  p.K = K;
  p.block_size = bs;
  return p;
}

Caps sm(int version, bool native = false) {
  Caps c;
  c.sm = version;
  c.native_fp4 = native;
  c.backend = "cuda";
  return c;
}
Caps sm90_wgmma() {
  Caps c = sm(90);
  c.wgmma = true;
  return c;
}

struct Row {
  Problem p;
  Caps caps;
  bool native_opt_in;
  Route route;
  const char* reason;
};

Problem misaligned(Problem p, uint32_t a, uint32_t b, uint32_t s) {
  p.a_address_mod16 = a;
  p.b_address_mod16 = b;
  p.scratch_address_mod16 = s;
  return p;
}

Problem scales_misaligned(Problem p) {
  p.scales_address_mod4 = 1;
  return p;
}

// DESIGN.md's table, one row per reason code.
TEST(SelectRoute, FollowsTheDesignTable) {
  const Row rows[] = {
      {problem(0, 8, 16, 16), sm(90), false, Route::empty, "m_zero"},
      {problem(4, 0, 16, 16), sm(90), false, Route::empty, "n_zero"},
      {problem(4, 8, 0, 16), sm(90), false, Route::empty, "k_zero"},
      {problem(8, 64, 256, 16), sm(90), false, Route::gemv_mma, "decode_mma"},
      {problem(1, 64, 96, 16), sm(90), false, Route::gemv_scalar, "decode_k_not_multiple_of_128"},
      {problem(1, 64, 256, 16), sm(75), false, Route::gemv_scalar, "decode_sm_below_80"},
      {problem(4, 64, 256, 16), sm(120, true), true, Route::gemv_mma, "decode_mma"},
      {problem(9, 64, 256, 16), sm(120, true), true, Route::native_sm120, "native_opted_in"},
      {problem(9, 64, 256, 16), sm(90), false, Route::prefill_fused, "fused_mma"},
      {problem(9, 64, 256, 16), sm(90), true, Route::prefill_fused, "fused_mma"},
      // The bands (kFusedBands, results/h200-crossover-small-weights.json):
      // each band's end and the first M past it, on weights at its least
      // N x K and one row of W short of it. M <= 16 on any weights.
      {problem(16, 64, 256, 16), sm(90), false, Route::prefill_fused, "fused_mma"},
      {problem(17, 64, 256, 16), sm(90), false, Route::prefill_vec8, "fused_m_above_crossover"},
      // M <= 32 from 2^20 weights (1024 x 1024: 0.89 at M = 32; 896 x 896: 1.16).
      {problem(17, 1024, 1024, 16), sm(90), false, Route::prefill_fused, "fused_mma"},
      {problem(32, 1024, 1024, 16), sm(90), false, Route::prefill_fused, "fused_mma"},
      {problem(32, 1023, 1024, 16), sm(90), false, Route::prefill_vec8, "fused_m_above_crossover"},
      {problem(32, 896, 896, 16), sm(90), false, Route::prefill_vec8, "fused_m_above_crossover"},
      {problem(33, 1024, 1024, 16), sm(90), false, Route::prefill_vec8, "fused_m_above_crossover"},
      // M <= 64 from 2^23 (2048 x 4096: 0.90 at M = 64; 2048 x 2048: 1.02).
      {problem(33, 2048, 4096, 16), sm(90), false, Route::prefill_fused, "fused_mma"},
      {problem(64, 2048, 4096, 16), sm(90), false, Route::prefill_fused, "fused_mma"},
      {problem(64, 2047, 4096, 16), sm(90), false, Route::prefill_vec8, "fused_m_above_crossover"},
      {problem(64, 2048, 2048, 16), sm(90), false, Route::prefill_vec8, "fused_m_above_crossover"},
      // Past M = 64 only wgmma keeps prefill_fused, whatever the weights.
      {problem(65, 2048, 4096, 16), sm(90), false, Route::prefill_vec8, "fused_m_above_crossover"},
      {problem(65, 8192, 4096, 16), sm(90), false, Route::prefill_vec8, "fused_m_above_crossover"},
      // With wgmma, M <= 128 from 2^23 (4096 x 2048: 0.97 at M = 128).
      {problem(65, 2048, 4096, 16), sm90_wgmma(), false, Route::prefill_fused, "fused_mma"},
      {problem(128, 4096, 2048, 16), sm90_wgmma(), false, Route::prefill_fused, "fused_mma"},
      {problem(128, 4095, 2048, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(129, 4096, 2048, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      // M <= 256 from 2^24 (4096 x 4096: 0.96 at M = 256; 3584 x 3584: 1.09).
      {problem(129, 4096, 4096, 16), sm90_wgmma(), false, Route::prefill_fused, "fused_mma"},
      {problem(256, 4096, 4096, 16), sm90_wgmma(), false, Route::prefill_fused, "fused_mma"},
      {problem(256, 4095, 4096, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(256, 3584, 3584, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(257, 4096, 4096, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      // 12288 x 4096, the band's one loss under the plan's old split (1.10 at
      // M = 256); with K whole 0.79 (kFusedNoSplitFillPercent).
      {problem(256, 12288, 4096, 16), sm90_wgmma(), false, Route::prefill_fused, "fused_mma"},
      {problem(257, 8192, 4096, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      // Two blocks over M (kFusedTwoBlocksMinM..kFusedTwoBlocksMaxM) where the
      // plan's blocks fill their rounds (8192 x 4096: 64 tiles x 2, 128 of
      // 132 slots, one K slice of 4096); each end and one either side.
      {problem(kFusedTwoBlocksMinM - 1, 8192, 4096, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(kFusedTwoBlocksMinM, 8192, 4096, 16), sm90_wgmma(), false, Route::prefill_fused,
       "fused_mma"},
      {problem(kFusedTwoBlocksMinM + 1, 8192, 4096, 16), sm90_wgmma(), false, Route::prefill_fused,
       "fused_mma"},
      {problem(kFusedTwoBlocksMaxM - 1, 8192, 4096, 16), sm90_wgmma(), false, Route::prefill_fused,
       "fused_mma"},
      {problem(kFusedTwoBlocksMaxM, 8192, 4096, 16), sm90_wgmma(), false, Route::prefill_fused,
       "fused_mma"},
      {problem(kFusedTwoBlocksMaxM + 1, 8192, 4096, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      // The fill at kFusedRoundFillPercent: 53 tiles (106 of 132 slots, 80.3
      // %) and 52 (104, 78.8 %); 14336 x 4096 over two rounds (224 of 264,
      // 84.8 %) and 12288 x 4096 (192 of 264, 72.7 %).
      {problem(kFusedTwoBlocksMaxM, 53 * 128, 4096, 16), sm90_wgmma(), false, Route::prefill_fused,
       "fused_mma"},
      {problem(kFusedTwoBlocksMaxM, 52 * 128, 4096, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(kFusedTwoBlocksMaxM, 14336, 4096, 16), sm90_wgmma(), false, Route::prefill_fused,
       "fused_mma"},
      {problem(kFusedTwoBlocksMaxM, 12288, 4096, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      // K slices at kFusedMinKPerSlice: 4096 x 8192 in 2 slices of 4096, and
      // 4096 x 8064 in 2 of 4032; 4096 x 4096 in 2 of 2048.
      {problem(kFusedTwoBlocksMinM, 4096, 8192, 16), sm90_wgmma(), false, Route::prefill_fused,
       "fused_mma"},
      {problem(kFusedTwoBlocksMinM, 4096, 8064, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(kFusedTwoBlocksMinM, 4096, 4096, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      // Three and four whole blocks over M (kFusedFullBlocksMinM, MaxM) at
      // kFusedFullBlocksFillPercent: 5120 x 5120 at M = 768 and 3840 x 4096
      // at 1024, 120 of 132 slots (90.9 %), and one either side of each M;
      // 4992 x 5120 (117, 88.6 %) and 3712 x 4096 (116, 87.9 %) below the
      // fill; 4096 x 3968 at 1024 (K whole, 3968), and 640 and 896 between.
      {problem(kFusedFullBlocksMinM - 1, 5120, 5120, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(kFusedFullBlocksMinM, 5120, 5120, 16), sm90_wgmma(), false, Route::prefill_fused,
       "fused_mma"},
      {problem(kFusedFullBlocksMinM + 1, 5120, 5120, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(kFusedFullBlocksMinM, 4992, 5120, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(kFusedFullBlocksMaxM - 1, 3840, 4096, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(kFusedFullBlocksMaxM, 3840, 4096, 16), sm90_wgmma(), false, Route::prefill_fused,
       "fused_mma"},
      {problem(kFusedFullBlocksMaxM + 1, 3840, 4096, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(kFusedFullBlocksMaxM, 3712, 4096, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(kFusedFullBlocksMaxM, 4096, 4096, 16), sm90_wgmma(), false, Route::prefill_fused,
       "fused_mma"},
      {problem(kFusedFullBlocksMaxM, 4096, 3968, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(640, 5120, 5120, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(896, 4096, 4096, 16), sm90_wgmma(), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(kFusedFullBlocksMaxM, 4096, 4096, 16), sm(90), false, Route::prefill_vec8,
       "fused_m_above_crossover"},
      {problem(9, 64, 256, 16), sm(75), false, Route::prefill_vec8, "fused_sm_below_80"},
      {problem(4, 64, 256, 32), sm(90), false, Route::prefill_vec8, "fused_block_size_not_16"},
      {problem(9, 64, 256, 32), sm(90), false, Route::prefill_vec8, "fused_block_size_not_16"},
      {misaligned(problem(4, 64, 256, 16), 2, 0, 0), sm(90), false, Route::prefill_vec8,
       "fused_unaligned"},
      {scales_misaligned(problem(9, 64, 256, 16)), sm(90), false, Route::prefill_vec8,
       "fused_unaligned"},
      {problem(4, 64, 40, 16), sm(90), false, Route::prefill_vec8, "fused_k_not_multiple_of_128"},
      {problem(9, 64, 264, 16), sm(90), false, Route::prefill_vec8, "fused_k_not_multiple_of_128"},
      {problem(9, 64, 256, 15), sm(90), false, Route::prefill_scalar, "odd_block_size"},
      {problem(9, 64, 260, 16), sm(90), false, Route::prefill_scalar, "k_not_multiple_of_8"},
      {misaligned(problem(9, 64, 256, 16), 0, 2, 0), sm(90), false, Route::prefill_scalar,
       "unaligned"},
      {misaligned(problem(9, 64, 264, 16), 0, 0, 8), sm(90), false, Route::prefill_scalar,
       "unaligned"},
      // The fused route does not use the scratch: its alignment does not matter there.
      {misaligned(problem(9, 64, 256, 16), 0, 0, 8), sm(90), false, Route::prefill_fused,
       "fused_mma"},
      {misaligned(problem(9, 64, 256, 16), 0, 4, 0), sm(90), false, Route::prefill_vec8,
       "fused_unaligned"},
  };
  for (const Row& r : rows) {
    Options o;
    o.native_opt_in = r.native_opt_in;
    const RouteChoice c = select_route(r.p, r.caps, o);
    const Decision d = explain_route(r.p, r.caps, o);
    EXPECT_EQ(route_name(c.route), std::string(route_name(r.route)))
        << "M=" << r.p.M << " N=" << r.p.N << " K=" << r.p.K << " bs=" << r.p.block_size << ": "
        << d.detail;
    EXPECT_EQ(c.reason, r.reason) << d.detail;
    // The explanation is of the same decision.
    EXPECT_EQ(d.route, c.route) << d.detail;
    EXPECT_EQ(d.reason, c.reason) << d.detail;
    const auto& declared = route_reasons(d.route);
    EXPECT_NE(std::find(declared.begin(), declared.end(), d.reason), declared.end())
        << d.reason << " is not declared for " << route_name(d.route);
  }
}

TEST(SelectRoute, NativeOnAnSm90DeviceIsPassedOverAndSaysWhy) {
  Options o;
  o.native_opt_in = true;
  const Decision d = explain_route(problem(16, 64, 256, 16), sm(90), o);
  EXPECT_EQ(d.route, Route::prefill_fused);
  EXPECT_NE(d.detail.find("native_sm120 opted in but passed over: sm 12.x (sm = 90) fails"),
            std::string::npos)
      << d.detail;
  EXPECT_EQ(native_sm120_missing_capability(sm(90)), "an sm_12x GPU (this device is sm_90)");
  EXPECT_EQ(native_sm120_missing_capability(sm(120, false)),
            "cuBLASLt block-scaled FP4 matmul in this build");
  EXPECT_EQ(native_sm120_missing_capability(sm(121, true)), "");
}

TEST(SelectRoute, NativeKeepsItsOwnShapePredicates) {
  Options o;
  o.native_opt_in = true;
  EXPECT_EQ(select_route(problem(16, 48, 256, 16), sm(120, true), o).route,
            Route::prefill_fused);  // N % 32
  EXPECT_EQ(select_route(problem(16, 64, 240, 16), sm(120, true), o).route,
            Route::prefill_vec8);  // K % 32
  EXPECT_EQ(select_route(problem(16, 64, 256, 32), sm(120, true), o).route,
            Route::prefill_vec8);  // bs
  EXPECT_EQ(select_route(problem(16, 64, 256, 16), sm(100, true), o).route,
            Route::prefill_fused);  // sm 10.x
}

TEST(SelectRoute, SimulatedCapsReplaceTheDevice) {
  Options o;
  o.simulated_caps = sm(75);
  EXPECT_EQ(select_route(problem(2, 64, 256, 16), sm(90), o).route, Route::gemv_scalar);
  o.simulated_caps = sm(120, true);
  o.native_opt_in = true;
  EXPECT_EQ(select_route(problem(64, 64, 256, 16), sm(90), o).route, Route::native_sm120);
}

TEST(SelectRoute, GemvScalarRowsPerWarpDivideN) {
  EXPECT_EQ(explain_route(problem(2, 64, 96, 16), sm(90), {}).variant, "rows4");
  EXPECT_EQ(explain_route(problem(2, 66, 96, 16), sm(90), {}).variant, "rows2");
  EXPECT_EQ(explain_route(problem(2, 1, 96, 16), sm(90), {}).variant, "rows1");
}

void expect_refused(Route r, const Problem& p, const Caps& caps, const std::string& predicate) {
  Options o;
  o.force_route = r;
  try {
    select_route(p, caps, o);
    FAIL() << "forcing " << route_name(r) << " should be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(predicate), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::string("force_route = ") + route_name(r)),
              std::string::npos);
  }
}

TEST(SelectRoute, ForcingARouteOnAShapeItCannotTakeIsRefusedNamingThePredicate) {
  expect_refused(Route::gemv_mma, problem(4, 64, 96, 16), sm(90), "K % 128 == 0 (K = 96) fails");
  expect_refused(Route::gemv_mma, problem(4, 64, 256, 16), sm(75), "sm >= 80 (sm = 75) fails");
  expect_refused(Route::gemv_mma, problem(9, 64, 256, 16), sm(90), "M <= 8 (M = 9) fails");
  expect_refused(Route::gemv_scalar, problem(4, 64, 40, 16), sm(90), "K % 32 == 0 (K = 40) fails");
  expect_refused(Route::gemv_scalar, problem(4, 64, 64, 32), sm(90),
                 "block_size == 16 (block_size = 32) fails");
  expect_refused(Route::prefill_vec8, problem(16, 64, 60, 16), sm(90), "K % 8 == 0 (K = 60) fails");
  expect_refused(Route::prefill_vec8, problem(16, 64, 64, 15), sm(90),
                 "block_size even (block_size = 15) fails");
  expect_refused(Route::prefill_vec8, misaligned(problem(16, 64, 64, 16), 0, 1, 0), sm(90),
                 "aligned");
  expect_refused(Route::native_sm120, problem(16, 64, 64, 16), sm(90), "sm 12.x (sm = 90) fails");
  expect_refused(Route::prefill_fused, problem(16, 64, 96, 16), sm(90),
                 "K % 128 == 0 (K = 96) fails");
  expect_refused(Route::prefill_fused, problem(16, 64, 128, 32), sm(90),
                 "block_size == 16 (block_size = 32) fails");
  expect_refused(Route::prefill_fused, problem(16, 64, 128, 16), sm(75),
                 "sm >= 80 (sm = 75) fails");
  expect_refused(Route::prefill_fused, misaligned(problem(16, 64, 128, 16), 0, 8, 0), sm(90),
                 "aligned");
}

// The crossover decides the chain's choice only: forced, prefill_fused runs
// at any M (the cross-route check and the bench force it past it).
TEST(SelectRoute, ForcingPrefillFusedPassesItsCrossover) {
  Options o;
  o.force_route = Route::prefill_fused;
  const Decision d = explain_route(problem(kFusedMaxM + 100, 64, 256, 16), sm(90), o);
  EXPECT_EQ(d.route, Route::prefill_fused);
  EXPECT_EQ(d.reason, "forced");
  EXPECT_EQ(d.detail.find("M <= "), std::string::npos) << d.detail;
  EXPECT_EQ(route_precondition_failure(Route::prefill_fused, problem(kFusedMaxM + 100, 64, 256, 16),
                                       sm(90)),
            "");
  const Decision natural = explain_route(problem(kFusedMaxM + 1, 64, 256, 16), sm(90), {});
  const std::string crossover =
      "prefill_fused passed over: M <= 16, or M <= 32 with N x K >= 2^20, or M <= 64 (128 with "
      "wgmma) "
      "with N x K >= 2^23, or M <= 256 with wgmma and N x K >= 2^24, or 448 <= M <= 512 with wgmma "
      "and the plan's blocks filling their rounds to 80 % in K slices of 4096 or more, or M = 768 "
      "or 1024 with wgmma and the plan's blocks filling their rounds to 90 % in K slices of 4096 "
      "or more ";
  EXPECT_NE(natural.detail.find(crossover + "(M = " + std::to_string(kFusedMaxM + 1) +
                                ", N = 64, K = 256, no wgmma, N x K = 16384) fails"),
            std::string::npos)
      << natural.detail;
  const Decision with_wgmma =
      explain_route(problem(kFusedMaxMWgmma + 1, 64, 256, 16), sm90_wgmma(), {});
  EXPECT_NE(with_wgmma.detail.find(crossover + "(M = " + std::to_string(kFusedMaxMWgmma + 1) +
                                   ", N = 64, K = 256, wgmma, N x K = 16384) fails"),
            std::string::npos)
      << with_wgmma.detail;
  // Where the plan's rounds decide, the explanation names the plan, how its
  // blocks fill their rounds and its K slices.
  const Decision partial = explain_route(problem(448, 12288, 4096, 16), sm90_wgmma(), {});
  EXPECT_NE(partial.detail.find(
                crossover +
                "(M = 448, N = 12288, K = 4096, wgmma, N x K = 50331648, plan w256n128: 192 blocks "
                "in 2 x 132 slots (72 %), K slices of 4096) fails"),
            std::string::npos)
      << partial.detail;
  const Decision thin = explain_route(problem(512, 4096, 4096, 16), sm90_wgmma(), {});
  EXPECT_NE(
      thin.detail.find("plan w256n128/k2-cluster: 128 blocks in 1 x 132 slots (96 %), K slices of "
                       "2048) fails"),
      std::string::npos)
      << thin.detail;
  expect_refused(Route::empty, problem(16, 64, 64, 16), sm(90), "M, N or K == 0");
  expect_refused(Route::prefill_scalar, problem(0, 64, 64, 16), sm(90), "M > 0 (M = 0) fails");
}

TEST(SelectRoute, ForcingARouteThatFitsTakesIt) {
  Options o;
  o.force_route = Route::prefill_scalar;
  const RouteChoice d = select_route(problem(16, 64, 64, 16), sm(90), o);
  EXPECT_EQ(d.route, Route::prefill_scalar);
  EXPECT_EQ(d.reason, "forced");
  o.force_route = Route::gemv_scalar;
  EXPECT_EQ(select_route(problem(8, 64, 256, 16), sm(90), o).route, Route::gemv_scalar);
}

// Pure: the same question always gets the same answer.
TEST(SelectRoute, IsPure) {
  const Problem p = problem(9, 100, 120, 12);
  const Decision a = explain_route(p, sm(90), {}), b = explain_route(p, sm(90), {});
  EXPECT_EQ(a.route, b.route);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.detail, b.detail);
}

}  // namespace
}  // namespace nvfp4
