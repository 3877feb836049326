// gemv_mma's host-side decisions that the output cannot show: how many warps
// share a tile's K (split_for) and where a stage's chunks sit in shared
// memory (chunk_offset). A wrong split or a swizzle with bank conflicts
// computes the same bits, only slower, so the operator tests pass either way
// (both were mutation survivors, ci/mutation/); these pin the contract the
// comments in gemv_mma.cuh state.
#include "kernels/nvfp4_matmul/gemv_mma.cuh"

#include <gtest/gtest.h>

#include <bitset>
#include <cstdint>
#include <set>

namespace nvfp4 {
namespace {

// As few warps per tile as keep target_warps busy: doubling while the tiles
// times the split are fewer than the target, while a part keeps at least two
// stages of K (256 k each), and up to the block's 8 warps.
TEST(GemvMmaSplit, KeepsTheTargetBusyWithTheFewestWarpsPerTile) {
  struct Case {
    int64_t N, K, target;
    uint32_t split;
  };
  const Case cases[] = {
      {16, 2048, 8, 8},   // one tile, 8 stages: all 8 warps on it
      {16, 2048, 64, 8},  // ...and never more than the block's warps
      {32, 2048, 8, 4},   // two tiles: 4 each makes 8
      {17, 2048, 8, 4},   // 17 rows are two tiles
      {128, 2048, 8, 1},  // 8 tiles already keep 8 warps busy
      {16, 512, 8, 2},    // 2 stages: at most 2 parts of one stage each
      {16, 256, 8, 1},    // 1 stage: no split
      {16, 128, 8, 1},    // a half stage alone: no split
      {16, 384, 8, 2},    // 1.5 stages: the half stage counts, so 2 parts
      {16, 2048, 1, 1},   // one warp wanted: no split
  };
  for (const Case& c : cases) {
    EXPECT_EQ(GemvMma::split_for(c.N, c.K, c.target), c.split)
        << "N = " << c.N << ", K = " << c.K << ", target_warps = " << c.target;
  }
}

// Every (row, chunk) of a stage has its own 16-byte slot in the code area,
// so what one lane copies in is what another reads back.
TEST(GemvMmaLayout, ChunkOffsetsTileTheStage) {
  std::set<uint32_t> slots;
  for (uint32_t row = 0; row < 16; ++row) {
    for (uint32_t chunk = 0; chunk < 8; ++chunk) {
      const uint32_t off = GemvMma::chunk_offset(row, chunk);
      EXPECT_EQ(off % 16, 0u) << "row " << row << ", chunk " << chunk;
      EXPECT_LT(off, GemvMma::kCodeBytes) << "row " << row << ", chunk " << chunk;
      EXPECT_EQ(off / GemvMma::kRowBytes, row) << "chunk " << chunk << " left its row";
      slots.insert(off);
    }
  }
  EXPECT_EQ(slots.size(), 16u * 8u);
}

// The reads of row_from_stage: lane (g, t) = (lane / 4, lane % 4) takes chunk
// 4w + t of row g (then of row g + 8). The 8 lanes of a quarter-warp read
// rows g and g + 1, 16 bytes each: they must cover the 32 banks once.
TEST(GemvMmaLayout, AQuarterWarpsStageReadsHitEveryBankOnce) {
  for (uint32_t quarter = 0; quarter < 4; ++quarter) {
    for (uint32_t row_base : {0u, 8u}) {
      for (uint32_t w = 0; w < 2; ++w) {
        std::bitset<32> banks;
        for (uint32_t lane = 8 * quarter; lane < 8 * quarter + 8; ++lane) {
          const uint32_t off = GemvMma::chunk_offset(row_base + lane / 4, 4 * w + lane % 4);
          for (uint32_t word = 0; word < 4; ++word) banks.set((off / 4 + word) % 32);
        }
        EXPECT_TRUE(banks.all()) << "quarter-warp " << quarter << ", rows from " << row_base
                                 << ", step " << w << ": banks " << banks;
      }
    }
  }
}

}  // namespace
}  // namespace nvfp4
