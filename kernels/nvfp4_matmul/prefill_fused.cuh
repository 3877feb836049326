// prefill_fused: the prefill GEMM that dequantizes on chip, for M > 8 (any M
// it is given), block_size == 16, K % 128 == 0 on sm >= 80, with mma.sync
// m16n8k16 and no scratch: the packed weights and their E4M3 scales stream
// from global memory into shared memory (cp.async), and each lane decodes its
// share straight into the mma's B operand.
//
// Roles: the activations take the mma's A slot (16 rows of A by 16 k) and the
// weights its B slot (16 k by 8 rows of W), so Y's rows are the mma's rows.
// A warp owns kMTiles * 16 rows of A by 16 rows of W (two n8 tiles: rows g
// and g + 8 of its 16, as in gemv_mma) and one 128-k step of each block stage.
// A block is kNWarps warps along N times kKWarps along K: a block stage is
// kKWarps steps, and the kKWarps warps of one column of the block meet at the
// end in shared memory, adding their parts in a fixed order, so the result
// does not depend on timing. Small M gets the most warps along K (few rows of
// A, so K must fill the SMs), large M the most along N (each A tile read
// from shared memory serves more columns). Blocks over M come from grid.y, a
// grid-stride loop past 65535 tiles.
//
// The k permutation is gemv_mma's (its header comment): within a step lane
// (g, t) holds k = 32t + 8q + {0..7} of word q, decoded by SpreadDecode into
// the pairs (0, 4), (1, 5), (2, 6), (3, 7); in mma j = 2q + h the B slot gets
// pairs 2h and 2h + 1 of its row and the A slot the activations of the same
// k, re-paired the same way (GemvMma::pair_activations). The sum over k does
// not care which k sits in which slot as long as both operands agree.
//
// Weights follow the contract, round_to_dtype(e2m1 * fl32(e4m3 * g)), on
// gemv_mma's two paths (GemvMma::StepScales, chosen per thread from g, the
// same for every thread): fast for g = 2^e in the dtype's window, the fp32
// sum then multiplied by 2^p once after the K parts meet (the same argument
// as gemv_mma's, DESIGN.md "Special values"), else the contract path. The
// bias joins in fp32 and the sum is rounded once (store_gemv_output), as on
// every other route.
//
// Shared memory per stage: A's tile (BM rows of kKWarps * 256 bytes; the
// 16-byte chunks of a row swizzled so that the 8 lanes of a quarter-warp,
// rows g and g + 1 and t = 0..3, hit the 32 banks once), then W's rows
// (kKWarps * 64 bytes of codes each, odd rows' halves swapped when a row
// holds at least 128 bytes, for the same reason), then their scales
// (kKWarps * 8 bytes a row). kStages stages, block-wide: one barrier a stage.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"
#include "kernels/nvfp4_matmul/gemv_output.cuh"
#include "kernels/nvfp4_matmul/probes.h"

namespace nvfp4 {

// The block shape for kMTiles tiles of 16 rows of A (the launcher takes 1,
// 4 or 8: dispatch.h, prefill_fused_m_tiles). Every shape has 8 warps and
// kStages stages of about 41 KB or less (the 100 KB of four 25 KB stages
// leave room for a second block; three of 41 KB do not).
template <int kMTiles>
struct PrefillFusedShape {
  static constexpr int kKWarps = kMTiles == 1 ? 4 : kMTiles == 2 ? 4 : kMTiles == 4 ? 2 : 1;
  static constexpr int kNWarps = 8 / kKWarps;
  static constexpr int kStages = kMTiles == 1 ? 4 : 3;
};

template <int kMTiles>
struct PrefillFused {
  using Shape = PrefillFusedShape<kMTiles>;
  static constexpr int kKWarps = Shape::kKWarps;
  static constexpr int kNWarps = Shape::kNWarps;
  static constexpr int kStages = Shape::kStages;
  static constexpr uint32_t kMaxBlockThreads = 256;
  static_assert(kKWarps * kNWarps * 32 == kMaxBlockThreads, "8 warps a block");

  static constexpr int64_t kStepK = 128;                // one warp's k of a stage
  static constexpr int64_t kStageK = kKWarps * kStepK;  // the block's k of a stage
  static constexpr int kTileRows = 16 * kMTiles;        // rows of A a block holds (BM)
  static constexpr int kTileCols = 16 * kNWarps;        // rows of W a block holds (BN)
  static constexpr uint32_t kARowBytes = kStageK * 2;   // a row of A in a stage
  static constexpr uint32_t kAChunksPerRow = kARowBytes / 16;
  static constexpr uint32_t kWRowBytes = kStageK / 2;  // a row's codes in a stage
  static constexpr uint32_t kWChunksPerRow = kWRowBytes / 16;
  static constexpr uint32_t kScaleRowBytes = kStageK / 16;  // a row's scales in a stage
  static constexpr uint32_t kABytes = kTileRows * kARowBytes;
  static constexpr uint32_t kWBytes = kTileCols * kWRowBytes;
  static constexpr uint32_t kScaleBytes = kTileCols * kScaleRowBytes;
  static constexpr uint32_t kStageBytes = kABytes + kWBytes + kScaleBytes;
  static constexpr uint32_t kSharedBytes = kStages * kStageBytes;
  // Where a K part parks its accumulators for the meeting: its lanes' 8 per tile.
  static constexpr uint32_t kParkedBytesPerWarp = 32 * kMTiles * 8 * 4;
  static_assert(kParkedBytesPerWarp * 8 <= kSharedBytes, "the parts park in the drained stages");
  static_assert(kScaleRowBytes % 4 == 0, "scales copy 4 bytes at a time");

  using Params = GemvOperands;

  // M tiles on grid.y up to CUDA's 65535, a grid-stride loop past it.
  static constexpr uint32_t kMaxGridRows = 65535;

  NVH_HD static int64_t m_tiles(int64_t M) { return (M + kTileRows - 1) / kTileRows; }
  static nvh::LaunchShape shape(const Params& p) {
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    const int64_t mt = m_tiles(p.M);
    s.grid = {static_cast<uint32_t>((p.N + kTileCols - 1) / kTileCols),
              static_cast<uint32_t>(mt < kMaxGridRows ? mt : kMaxGridRows), 1};
    s.shared_bytes = kSharedBytes;
    s.uses_collectives = true;
    return s;
  }

  // Byte offset of 16-byte chunk c of row r of A's tile. The swizzle flips
  // the low two bits of c by (bit 3 of c, parity of r): a quarter-warp reads
  // chunk 16 kw + 4t + q of rows g, g + 1 for t = 0..3, whose bank groups
  // (c mod 8 after the flip) are then 4 (t & 1) + (q ^ flip), eight distinct.
  NVH_HD static uint32_t a_offset(uint32_t row, uint32_t chunk) {
    const uint32_t flip = ((chunk >> 3) & 1u) | ((row & 1u) << 1);
    return row * kARowBytes + 16 * (chunk ^ flip);
  }
  // Byte offset of chunk c of W's row r: rows of at least 8 chunks swap
  // their halves in odd rows (the two rows of a quarter-warp's reads would
  // otherwise sit on the same banks); rows of 4 chunks (64 bytes) already
  // put an odd row on the other half.
  NVH_HD static uint32_t w_offset(uint32_t row, uint32_t chunk) {
    const uint32_t flip = kWChunksPerRow >= 8 ? 4u * (row & 1u) : 0u;
    return kABytes + row * kWRowBytes + 16 * (chunk ^ flip);
  }
  NVH_HD static uint32_t scale_offset(uint32_t row) {
    return kABytes + kWBytes + row * kScaleRowBytes;
  }

  // What a block's copy of one stage needs.
  struct Tile {
    int64_t m0, n0;  // first row of A, first row of W
  };

  // The block copies stage `stage` into `slot`: A's rows (rows past M copy
  // row M - 1: a row of A only meets its own outputs, which are not stored),
  // W's codes and scales (rows past N copy row N - 1, likewise). Steps past
  // K are not copied; the warps that would read them skip them.
  template <class Ctx>
  NVH_HD static void issue_stage(Ctx& ctx, const Params& p, const Tile& tile, int64_t stage,
                                 uint8_t* slot) {
    const uint32_t tid = ctx.thread_idx().x;
    const int64_t k0 = stage * kStageK;
    // Chunks of this stage within K: whole steps of 128 k.
    const int64_t steps_left = p.K / kStepK - stage * kKWarps;
    const uint32_t steps = static_cast<uint32_t>(steps_left < kKWarps ? steps_left : kKWarps);
    const uint32_t a_chunks = steps * (kStepK / 8), w_chunks = steps * (kStepK / 32);
    for (uint32_t j = tid; NVFP4_PROBE(j < kTileRows * kAChunksPerRow); j += kMaxBlockThreads) {
      const uint32_t row = j / kAChunksPerRow, chunk = j % kAChunksPerRow;
      if (NVFP4_PROBE(chunk >= a_chunks)) continue;
      const int64_t m = tile.m0 + row < p.M ? tile.m0 + row : p.M - 1;
      ctx.cp_async16(slot + a_offset(row, chunk), p.A + m * p.K + k0 + 8 * chunk);
    }
    for (uint32_t j = tid; NVFP4_PROBE(j < kTileCols * kWChunksPerRow); j += kMaxBlockThreads) {
      const uint32_t row = j / kWChunksPerRow, chunk = j % kWChunksPerRow;
      if (NVFP4_PROBE(chunk >= w_chunks)) continue;
      const int64_t n = tile.n0 + row < p.N ? tile.n0 + row : p.N - 1;
      ctx.cp_async16(slot + w_offset(row, chunk), p.packed + n * (p.K / 2) + k0 / 2 + 16 * chunk);
    }
    // Scales: 4 bytes (64 k of one row) a copy.
    constexpr uint32_t kScaleWords = kScaleRowBytes / 4;
    for (uint32_t j = tid; NVFP4_PROBE(j < kTileCols * kScaleWords); j += kMaxBlockThreads) {
      const uint32_t row = j / kScaleWords, word = j % kScaleWords;
      if (NVFP4_PROBE(word >= 2 * steps)) continue;
      const int64_t n = tile.n0 + row < p.N ? tile.n0 + row : p.N - 1;
      ctx.cp_async4(slot + scale_offset(row) + 4 * word,
                    p.scales + n * (p.K / 16) + k0 / 16 + 4 * word);
    }
  }

  // Lane (g, t)'s share of its warp's step for W's row `row` of the tile:
  // chunk 4 kw + t (codes 32t on of the step) and its two block scales.
  NVH_HD static GemvMma::RowStep row_step(const uint8_t* slot, uint32_t row, int kw, int t) {
    const nvh::U32x4 v = nvh::load_generic_u32x4(slot + w_offset(row, 4 * kw + t));
    const uint16_t scales = nvh::load_generic_u16(slot + scale_offset(row) + 8 * kw + 2 * t);
    return GemvMma::RowStep{{v.x, v.y, v.z, v.w}, scales};
  }

  // Where a warp sits in the block.
  struct WarpPlace {
    int nw, kw, g, t;
  };

  // One warp's step of one stage: per word q its two rows' weight pairs,
  // then for every tile of A the activations of the same k and two mmas per
  // half (one per n8 tile). d[i][j] holds tile i of A times n8 tile j.
  template <nvh::HalfKind kKind, bool kContract, class Ctx>
  NVH_HD static void mma_step(Ctx& ctx, const uint8_t* slot, const WarpPlace& w, float gs,
                              float d[kMTiles][2][4]) {
    const GemvMma::RowStep lo = row_step(slot, 16 * w.nw + w.g, w.kw, w.t);
    const GemvMma::RowStep hi = row_step(slot, 16 * w.nw + w.g + 8, w.kw, w.t);
    const GemvMma::StepScales<kKind, kContract> scales_lo(lo.scales, gs), scales_hi(hi.scales, gs);
    for (int q = 0; q < 4; ++q) {
      uint32_t w_lo[4], w_hi[4];
      scales_lo.weights(lo, q, w_lo);
      scales_hi.weights(hi, q, w_hi);
      const uint32_t chunk = 16 * w.kw + 4 * w.t + q;
      for (int i = 0; i < kMTiles; ++i) {
        uint32_t a_lo[4], a_hi[4];
        GemvMma::pair_activations(nvh::load_generic_u32x4(slot + a_offset(16 * i + w.g, chunk)),
                                  a_lo);
        GemvMma::pair_activations(nvh::load_generic_u32x4(slot + a_offset(16 * i + w.g + 8, chunk)),
                                  a_hi);
        for (int h = 0; h < 2; ++h) {
          const uint32_t a[4] = {a_lo[2 * h], a_hi[2 * h], a_lo[2 * h + 1], a_hi[2 * h + 1]};
          const uint32_t b_lo[2] = {w_lo[2 * h], w_lo[2 * h + 1]};
          const uint32_t b_hi[2] = {w_hi[2 * h], w_hi[2 * h + 1]};
          ctx.mma_m16n8k16(d[i][0], a, b_lo, d[i][0], kKind);
          ctx.mma_m16n8k16(d[i][1], a, b_hi, d[i][1], kKind);
        }
      }
    }
  }

  // The stages of one tile of the output, `stages` of them, streamed kStages
  // deep: wait for stage s, barrier (every thread's copies of s landed, and
  // every warp is done with the slot about to be refilled), issue stage
  // s + kStages - 1, compute s. Empty commit groups keep the wait count uniform.
  template <nvh::HalfKind kKind, bool kContract, class Ctx>
  NVH_HD static void stream(Ctx& ctx, const Params& p, const Tile& tile, const WarpPlace& w,
                            float gs, float d[kMTiles][2][4]) {
    uint8_t* smem = ctx.template shared_mem<uint8_t>();
    const int64_t steps = p.K / kStepK;
    const int64_t stages = (steps + kKWarps - 1) / kKWarps;
    for (int s = 0; s < kStages - 1; ++s) {
      if (NVFP4_PROBE(s < stages)) issue_stage(ctx, p, tile, s, smem + s * kStageBytes);
      ctx.cp_async_commit();
    }
    for (int64_t s = 0; NVFP4_PROBE(s < stages); ++s) {
      ctx.template cp_async_wait<kStages - 2>();
      ctx.sync_threads();
      const int64_t next = s + kStages - 1;
      if (NVFP4_PROBE(next < stages)) {
        issue_stage(ctx, p, tile, next, smem + (next % kStages) * kStageBytes);
      }
      ctx.cp_async_commit();
      if (NVFP4_PROBE(s * kKWarps + w.kw < steps)) {
        mma_step<kKind, kContract>(ctx, smem + (s % kStages) * kStageBytes, w, gs, d);
      }
    }
    ctx.template cp_async_wait<0>();
    ctx.sync_threads();  // every warp is done with the stages: they become the parking lot
  }

  // The K parts of a column of warps meet: parts 1.. park their sums in
  // shared memory, part 0 adds them in order 1, 2, ... (fixed: no timing in
  // the result). Returns whether this warp holds the column's sum.
  template <class Ctx>
  NVH_HD static bool meet(Ctx& ctx, const WarpPlace& w, float d[kMTiles][2][4]) {
    float* parked = ctx.template shared_mem<float>();
    const uint32_t lane = ctx.lane();
    const auto at = [&](int nw, int kw) {
      return parked + ((nw * kKWarps + kw) * 32 + lane) * (kMTiles * 8);
    };
    if (NVFP4_PROBE(w.kw != 0)) {
      float* mine = at(w.nw, w.kw);
      for (int i = 0; i < kMTiles; ++i) {
        for (int e = 0; e < 8; ++e) nvh::store_f32(mine + 8 * i + e, d[i][e / 4][e % 4]);
      }
    }
    ctx.sync_threads();
    if (NVFP4_PROBE(w.kw != 0)) return false;
    for (int kw = 1; kw < kKWarps; ++kw) {
      const float* other = at(w.nw, kw);
      for (int i = 0; i < kMTiles; ++i) {
        for (int e = 0; e < 8; ++e) {
          d[i][e / 4][e % 4] =
              nvh::add_rn(d[i][e / 4][e % 4], nvh::load_generic_f32(other + 8 * i + e));
        }
      }
    }
    return true;
  }

  // One tile of the output: stream K, meet, and store (bias, one rounding).
  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void run_tile(Ctx& ctx, const Params& p, const Tile& tile, const WarpPlace& w) {
    float d[kMTiles][2][4];
    for (int i = 0; i < kMTiles; ++i) {
      for (int e = 0; e < 8; ++e) d[i][e / 4][e % 4] = 0.0f;  // +0: the contract's sums start there
    }
    // weight_scale_2, the same for every thread: a uniform branch.
    const float gs = nvh::load_generic_f32(p.global_scale);
    const bool fast = GemvMma::fast_g<kKind>(gs);
    if (NVFP4_PROBE(fast)) {
      stream<kKind, false>(ctx, p, tile, w, 0.0f, d);
    } else {
      stream<kKind, true>(ctx, p, tile, w, gs, d);
    }
    const bool holder = kKWarps == 1 || meet(ctx, w, d);
    if (holder) {
      const float restore = fast ? GemvMma::fast_scales<kKind>(gs).restore : 1.0f;
      for (int i = 0; i < kMTiles; ++i) {
        for (int e = 0; e < 8; ++e) {
          const int64_t m = tile.m0 + 16 * i + w.g + (e % 4 >= 2 ? 8 : 0);
          const int64_t n = tile.n0 + 16 * w.nw + 8 * (e / 4) + 2 * w.t + (e % 2);
          if (NVFP4_PROBE(m >= p.M || n >= p.N)) continue;
          store_gemv_output<kKind>(p, nvh::mul_rn(d[i][e / 4][e % 4], restore), m, n);
        }
      }
    }
    // The next tile's prologue refills the stages the parking lot used.
    ctx.sync_threads();
  }

  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void run_kind(Ctx& ctx, const Params& p) {
    const uint32_t warp = ctx.warp(), lane = ctx.lane();
    const WarpPlace w{static_cast<int>(warp / kKWarps), static_cast<int>(warp % kKWarps),
                      static_cast<int>(lane / 4), static_cast<int>(lane % 4)};
    const int64_t n0 = int64_t{ctx.block_idx().x} * kTileCols;
    for (int64_t mt = ctx.block_idx().y; NVFP4_PROBE(mt < m_tiles(p.M)); mt += ctx.grid_dim().y) {
      run_tile<kKind>(ctx, p, Tile{mt * kTileRows, n0}, w);
    }
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    if (NVFP4_PROBE(p.kind == nvh::HalfKind::fp16)) {
      run_kind<nvh::HalfKind::fp16>(ctx, p);
    } else {
      run_kind<nvh::HalfKind::bf16>(ctx, p);
    }
  }
};

}  // namespace nvfp4
