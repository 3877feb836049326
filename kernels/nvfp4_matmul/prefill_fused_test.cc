// prefill_fused on every backend this build has, against the reference: the
// edges of its tiles (rows of A and W past a tile), its K parts (a block
// stage of 1, 2 or 4 steps, a last stage with fewer), bias on and off, fp16
// and bf16, both weight paths (g = 2^e and any other g), special values, and
// the same bits as prefill_vec8 in exact mode. Then the shared-memory layout
// its comments promise, which the output cannot show (a swizzle that
// collides computes the same bits, only slower).
#include "kernels/nvfp4_matmul/prefill_fused.cuh"

#include <gtest/gtest.h>

#include <bitset>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "properties/nvfp4_matmul/matmul_case.h"
#include "properties/nvfp4_matmul/value_class.h"

namespace nvfp4 {
namespace {

class FusedOnBackend : public nvh::OnBackend {};

// Runs the case forced onto prefill_fused (so the dispatcher's crossover
// does not decide what is tested) and checks it as the property suites do.
CaseRun run_fused(nvh::Backend& backend, CaseSpec spec) {
  spec.options.force_route = Route::prefill_fused;
  const CaseInputs in = make_inputs(spec);
  const Oracle oracle = make_oracle(spec, in);
  const CaseRun run = run_case(backend, spec, in);
  EXPECT_EQ(route_name(run.decision.route), std::string("prefill_fused")) << spec.name();
  EXPECT_EQ(check_output_bound(spec, in, run, oracle), "") << spec.name();
  EXPECT_EQ(check_guards(run), "") << spec.name();
  EXPECT_EQ(check_nonzero(spec, in, run, oracle), "") << spec.name();
  if (spec.exact) {
    EXPECT_EQ(check_output_exact(run, oracle), "") << spec.name();
  }
  return run;
}

CaseSpec fused_case(int64_t M, int64_t N, int64_t K, DType t, bool bias, bool exact,
                    uint64_t seed = 1) {
  return make_case("adhoc", M, N, K, 16, t, bias, exact, seed);
}

// Each block shape (1, 4, 8 tiles of A: M up to 32 in blocks of 16 rows,
// up to 64, then 128 a block), with M at and one past a tile's rows, N at and past a block's
// columns, K of one step to more stages than the pipeline holds.
TEST_P(FusedOnBackend, MatchesTheReferenceAtTileEdges) {
  struct Shape {
    int64_t M, N, K;
  };
  const Shape shapes[] = {
      {9, 32, 128},    // one step: a block stage of 4 with 3 warps idle
      {16, 33, 640},   // 5 steps: a last stage of 1 of 4; a second block of 1 row of W
      {17, 31, 1024},  // two blocks over M, 2 stages of 4 steps; rows of W past N
      {32, 64, 384},  {33, 65, 256},  // four tiles, 2 steps a stage; a last block of 1 row of W
      {64, 7, 1152},                  // 9 steps: more stages than the pipeline's 3
      {65, 130, 512},                 // eight tiles (128 rows), 1 step a stage; 65 rows of 128
      {129, 16, 256},                 // two blocks over M
  };
  for (const Shape& s : shapes) {
    for (DType t : {DType::fp16, DType::bf16}) {
      for (bool bias : {false, true}) {
        run_fused(backend(), fused_case(s.M, s.N, s.K, t, bias, false, 3));
        run_fused(backend(), fused_case(s.M, s.N, s.K, t, bias, true, 4));
      }
    }
  }
}

// In exact mode the fused route computes prefill_vec8's bits (every route's):
// the same digest, through both weight paths (make_inputs draws g = 2^e in
// exact mode; the contract path is the g of the second case).
TEST_P(FusedOnBackend, ExactModeGivesPrefillVec8sBits) {
  for (DType t : {DType::fp16, DType::bf16}) {
    for (int64_t M : {12, 40, 100}) {
      CaseSpec s = fused_case(M, 48, 512, t, true, true, 7);
      const std::string fused = run_fused(backend(), s).y_sha256;
      s.options.force_route = Route::prefill_vec8;
      const CaseInputs in = make_inputs(s);
      EXPECT_EQ(run_case(backend(), s, in).y_sha256, fused) << s.name();
    }
  }
}

// Every special-value class (DESIGN.md, "Special values") in exact mode:
// the reference's bits, the g classes taking both weight paths.
TEST_P(FusedOnBackend, SpecialValuesFollowTheContract) {
  for (DType t : {DType::fp16, DType::bf16}) {
    for (ValueClass c : all_value_classes()) {
      CaseSpec s = fused_case(20, 24, 256, t, true, true, 5);
      s.value_class = c;
      run_fused(backend(), s);
    }
  }
}

// A grid of more than 65535 tiles of A loops over grid.y: too large for the
// host executor to run, so its shape is checked instead.
TEST(PrefillFusedShape, MTilesPastTheGridLimitLoop) {
  GemvOperands p{};
  p.M = int64_t{65536} * 128 + 1;
  p.N = 256;
  p.K = 128;
  const nvh::LaunchShape s = PrefillFused<8>::shape(p);
  EXPECT_EQ(s.grid.y, PrefillFused<8>::kMaxGridRows);
  EXPECT_EQ(s.grid.x, 2u);
  EXPECT_EQ(PrefillFused<8>::m_tiles(p.M), 65537);
}

// The block shapes the launcher picks by M.
TEST(PrefillFusedShape, MTilesHoldM) {
  EXPECT_EQ(prefill_fused_m_tiles(9), 1);
  EXPECT_EQ(prefill_fused_m_tiles(16), 1);
  EXPECT_EQ(prefill_fused_m_tiles(17), 1);
  EXPECT_EQ(prefill_fused_m_tiles(32), 1);
  EXPECT_EQ(prefill_fused_m_tiles(33), 4);
  EXPECT_EQ(prefill_fused_m_tiles(64), 4);
  EXPECT_EQ(prefill_fused_m_tiles(65), 8);
  EXPECT_EQ(prefill_fused_m_tiles(100000), 8);
}

// Every (row, chunk) of a stage has its own 16-byte slot, inside its row's
// area, so what one thread copies in is what another reads back.
template <int kMTiles>
void expect_slots_tile_the_stage() {
  using F = PrefillFused<kMTiles>;
  std::set<uint32_t> slots;
  for (uint32_t row = 0; row < F::kTileRows; ++row) {
    for (uint32_t c = 0; c < F::kAChunksPerRow; ++c) {
      const uint32_t off = F::a_offset(row, c);
      EXPECT_EQ(off / F::kARowBytes, row) << "A chunk " << c << " left its row";
      slots.insert(off);
    }
  }
  for (uint32_t row = 0; row < F::kTileCols; ++row) {
    for (uint32_t c = 0; c < F::kWChunksPerRow; ++c) {
      const uint32_t off = F::w_offset(row, c);
      EXPECT_EQ((off - F::kABytes) / F::kWRowBytes, row) << "W chunk " << c << " left its row";
      slots.insert(off);
    }
  }
  EXPECT_EQ(slots.size(), F::kTileRows * F::kAChunksPerRow + F::kTileCols * F::kWChunksPerRow);
  EXPECT_LE(F::scale_offset(F::kTileCols - 1) + F::kScaleRowBytes, F::kStageBytes);
}

TEST(PrefillFusedLayout, SlotsTileTheStage) {
  expect_slots_tile_the_stage<1>();
  expect_slots_tile_the_stage<4>();
  expect_slots_tile_the_stage<8>();
}

// The reads of mma_step: lane (g, t) takes chunk 16 kw + 4t + q of A's rows
// 16i + g (and + 8), and chunk 4 kw + t of W's rows 16 nw + g (and + 8). The
// 8 lanes of a quarter-warp (rows g, g + 1) must hit the 32 banks once.
template <int kMTiles>
void expect_reads_hit_every_bank_once() {
  using F = PrefillFused<kMTiles>;
  for (int kw = 0; kw < F::kKWarps; ++kw) {
    for (uint32_t quarter = 0; quarter < 4; ++quarter) {
      for (uint32_t q = 0; q < 4; ++q) {
        std::bitset<32> a_banks, w_banks;
        for (uint32_t lane = 8 * quarter; lane < 8 * quarter + 8; ++lane) {
          const uint32_t g = lane / 4, t = lane % 4;
          const uint32_t a = F::a_offset(8 + g, 16 * kw + 4 * t + q);
          const uint32_t w = F::w_offset(8 + g, 4 * kw + t);
          for (uint32_t word = 0; word < 4; ++word) {
            a_banks.set((a / 4 + word) % 32);
            w_banks.set((w / 4 + word) % 32);
          }
        }
        EXPECT_TRUE(a_banks.all()) << kMTiles << " tiles, kw " << kw << ", quarter " << quarter
                                   << ", q " << q << ": A banks " << a_banks;
        EXPECT_TRUE(w_banks.all())
            << kMTiles << " tiles, kw " << kw << ", quarter " << quarter << ": W banks " << w_banks;
      }
    }
  }
}

TEST(PrefillFusedLayout, AQuarterWarpsReadsHitEveryBankOnce) {
  expect_reads_hit_every_bank_once<1>();
  expect_reads_hit_every_bank_once<4>();
  expect_reads_hit_every_bank_once<8>();
}

INSTANTIATE_TEST_SUITE_P(Backends, FusedOnBackend, ::testing::ValuesIn(nvh::backend_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace nvfp4
