// prefill_fused: the prefill GEMM that dequantizes on chip, for M > 8 (any M
// it is given), block_size == 16, K % 128 == 0 on sm >= 80, with mma.sync
// m16n8k16 and no dequant scratch: the packed weights and their E4M3 scales
// stream from global memory into shared memory (cp.async), and each lane
// decodes its share straight into the mma's B operand.
//
// Roles: the activations take the mma's A slot (16 rows of A by 16 k) and the
// weights its B slot (16 k by 8 rows of W), so Y's rows are the mma's rows.
// A warp owns a warp tile of kMTiles * 16 rows of A by kNTiles * 8 rows of W
// and one 128-k step of each block stage: per step it decodes each of its
// kNTiles rows' 32 codes once and feeds them to kMTiles tiles of A, and each
// A fragment it loads feeds kNTiles mmas (the larger the tile, the fewer
// decodes and shared-memory reads per mma: what bounded the first version of
// this kernel, whose warps owned 16 rows of W; PERF.md).
//
// A block is kMWarps x kNWarps x kKWarps warps: kMWarps along M, kNWarps
// along N, kKWarps along K. A block stage is kKWarps steps; the kKWarps
// warps of one warp tile meet at the end in shared memory and add their
// parts in a fixed order (1, 2, ... onto part 0), so the result does not
// depend on timing.
//
// Blocks split K too (grid.z, `k_slices`, chosen by the plan in dispatch.cc
// from M, N and K only, never from the device, so every backend sums in the
// same order): at small M a block over all of K would read all of A for
// every 64 or 128 rows of W, and too few blocks would fill the SMs. Slice z
// holds steps [z * steps / S, (z + 1) * steps / S). With S > 1 each block
// writes its fp32 sums, not yet scaled or biased, to parts[z][m][n] in the
// workspace, and prefill_fused_sum.cuh adds the S parts in order z = 0, 1, ...
// then does what the store below does for S = 1.
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
// sum then multiplied by 2^p once after every part has met (the same argument
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
#include "kernels/nvfp4_matmul/prefill_fused_plan.h"
#include "kernels/nvfp4_matmul/probes.h"

namespace nvfp4 {

// What a prefill_fused launch reads and writes: the operands, the columns
// of Y it computes, and with k_slices > 1 the fp32 parts of those columns
// ([k_slices][M][n_end - n_begin], 4-byte aligned).
struct PrefillFusedParams : GemvOperands {
  float* parts;
  int32_t k_slices;
  // [n_begin, n_end): all of N (whole_columns), or one side of a plan that
  // splits its last round of tiles along K (prefill_fused_plan.h,
  // FusedPlan::tail_tiles). n_begin is a multiple of the launch's tile
  // columns, so a block's tile starts n_begin + its tile columns in.
  int64_t n_begin, n_end;
  // `packed` holds W's codes in prefill_fused_prepack.cuh's order, which the
  // wgmma kernel reads without regathering them (the mma.sync shapes read
  // the contract's order only: the runner never sets this for them).
  bool prepacked = false;

  NVH_HD int64_t cols() const { return n_end - n_begin; }
  // Where slice z's sum for output (m, n) goes among the parts.
  NVH_HD float* part(int64_t z, int64_t m, int64_t n) const {
    return parts + (z * M + m) * cols() + (n - n_begin);
  }
};

// A launch over every column of Y.
inline PrefillFusedParams whole_columns(const GemvOperands& operands, float* parts,
                                        int32_t k_slices) {
  return PrefillFusedParams{operands, parts, k_slices, 0, operands.N};
}

// The launch of a fused block shape F (prefill_fused.cuh's, and
// prefill_fused_wgmma.cuh's): grid.x over N's tiles, grid.y over M's up to
// F::kMaxGridRows (a grid-stride loop past it), grid.z the K slices; the
// stages in dynamic shared memory.
template <class F>
nvh::LaunchShape fused_tile_launch(const PrefillFusedParams& p) {
  nvh::LaunchShape s;
  s.block = {F::kMaxBlockThreads, 1, 1};
  const int64_t mt = F::m_tiles(p.M);
  s.grid = {static_cast<uint32_t>((p.cols() + F::kTileCols - 1) / F::kTileCols),
            static_cast<uint32_t>(mt < F::kMaxGridRows ? mt : F::kMaxGridRows),
            static_cast<uint32_t>(p.k_slices)};
  s.shared_bytes = F::kSharedBytes;
  s.uses_collectives = true;
  return s;
}

// The last row of a tile that is a row of its operand. A row of A or W
// meets only its own outputs, so rows past M or N need no data: A's are
// zero-filled (cp_async16_or_zero, no read), W's copy this last row.
NVH_HD inline uint32_t fused_last_row(int64_t rows, int64_t first, uint32_t tile_rows) {
  const int64_t last = rows - 1 - first;
  return static_cast<uint32_t>(last < tile_rows - 1 ? last : tile_rows - 1);
}

// Row `row` of a tile from its operand: the tile's first row `base` plus
// min(row, last) rows of `pitch` bytes. 32-bit rows and pitches (K < 2^31,
// nvfp4_matmul.cc) and one wide multiply-add a copy: with the rows in 64
// bits, clamped and multiplied per copy, the copies of a wgmma stage took
// as many instructions as its decode (SASS, 2026-12-02).
NVH_HD inline const uint8_t* fused_row_of(const uint8_t* base, uint32_t row, uint32_t last,
                                          uint32_t pitch) {
  return base + uint64_t{row < last ? row : last} * pitch;
}

template <int kMTilesArg, int kNTilesArg, int kMWarpsArg, int kNWarpsArg, int kKWarpsArg,
          int kStagesArg>
struct PrefillFused {
  static constexpr int kMTiles = kMTilesArg;  // 16-row tiles of A a warp holds
  static constexpr int kNTiles = kNTilesArg;  // 8-row tiles of W a warp holds
  static constexpr int kMWarps = kMWarpsArg, kNWarps = kNWarpsArg, kKWarps = kKWarpsArg;
  static constexpr int kStages = kStagesArg;
  static constexpr int kWarps = kMWarps * kNWarps * kKWarps;
  static constexpr uint32_t kMaxBlockThreads = 32 * kWarps;
  static_assert(kWarps <= 8 && kStages >= 2, "blocks of up to 8 warps, two stages or more");

  static constexpr int64_t kStepK = 128;                    // one warp's k of a stage
  static constexpr int64_t kStageK = kKWarps * kStepK;      // the block's k of a stage
  static constexpr int kTileRows = 16 * kMTiles * kMWarps;  // rows of A a block holds (BM)
  static constexpr int kTileCols = 8 * kNTiles * kNWarps;   // rows of W a block holds (BN)
  static constexpr uint32_t kARowBytes = kStageK * 2;       // a row of A in a stage
  static constexpr uint32_t kAChunksPerRow = kARowBytes / 16;
  static constexpr uint32_t kWRowBytes = kStageK / 2;  // a row's codes in a stage
  static constexpr uint32_t kWChunksPerRow = kWRowBytes / 16;
  static constexpr uint32_t kScaleRowBytes = kStageK / 16;  // a row's scales in a stage
  static constexpr uint32_t kABytes = kTileRows * kARowBytes;
  static constexpr uint32_t kWBytes = kTileCols * kWRowBytes;
  static constexpr uint32_t kScaleBytes = kTileCols * kScaleRowBytes;
  static constexpr uint32_t kStageBytes = kABytes + kWBytes + kScaleBytes;
  static constexpr uint32_t kSharedBytes = kStages * kStageBytes;
  // The accumulators of one warp (per lane) and where K parts 1.. park them
  // for the meeting: element-major, so a warp's 32 lanes store one element
  // to 32 consecutive words (no bank conflicts).
  static constexpr int kSums = kMTiles * kNTiles * 4;
  static constexpr uint32_t kParkedBytes =
      uint32_t{kMWarps * kNWarps * (kKWarps - 1)} * 32 * kSums * 4;
  static_assert(kParkedBytes <= kSharedBytes, "the parts park in the drained stages");
  static_assert(kScaleRowBytes % 4 == 0, "scales copy 4 bytes at a time");

  // One block an SM (shared memory: every shape's stages take most of the
  // 228 KB an SM has), so the compiler may use up to 255 registers a thread
  // (ptxas -v, nvcc 13.0: 198 to 242 on sm_90a, 177 to 247 on sm_80 in the
  // shapes below, no spills) and the block keeps its loads in flight through
  // the pipeline's depth instead. (Two blocks an SM, with half the stages
  // and 128 registers, measured no faster: PERF.md.)
  static constexpr int kMinBlocksPerSM = 1;
  static_assert(kSharedBytes <= 227 * 1024, "a block's shared memory on sm_90");

  using Params = PrefillFusedParams;

  // M tiles on grid.y up to CUDA's 65535, a grid-stride loop past it.
  static constexpr uint32_t kMaxGridRows = 65535;

  NVH_HD static int64_t m_tiles(int64_t M) { return (M + kTileRows - 1) / kTileRows; }
  static nvh::LaunchShape shape(const Params& p) { return fused_tile_launch<PrefillFused>(p); }

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

  // The steps of K block slice z holds: [first, end).
  struct Slice {
    int64_t first, end;
  };
  NVH_HD static Slice slice_of(int64_t K, int64_t slices, int64_t z) {
    const int64_t steps = K / kStepK;
    return Slice{z * steps / slices, (z + 1) * steps / slices};
  }

  // What a block's copy of one stage needs.
  struct Tile {
    int64_t m0, n0;  // first row of A, first row of W
    Slice slice;
  };

  // The block's threads copy a stage in rounds of kMaxBlockThreads 16-byte
  // chunks (4-byte words for the scales). A round covers whole rows, so a
  // thread copies the same chunk of every row it copies, rows kRowsPerRound
  // apart, and its rows keep their parity (the swizzles' only row input):
  // the thread's shared-memory offsets are its first one plus whole rows,
  // and each copy costs an add, a clamp and a multiply (first version: the
  // general index arithmetic per copy was most of the kernel's instructions,
  // Nsight Compute, PERF.md).
  template <uint32_t kChunksPerRow, uint32_t kRows>
  struct CopyRounds {
    static_assert(kMaxBlockThreads % kChunksPerRow == 0, "a round covers whole rows");
    static constexpr uint32_t kRowsPerRound = kMaxBlockThreads / kChunksPerRow;
    static_assert(kRows % kRowsPerRound == 0 && kRowsPerRound % 2 == 0,
                  "whole rounds, rows of one parity per thread");
    static constexpr uint32_t kRounds = kRows / kRowsPerRound;
  };
  using ACopy = CopyRounds<kAChunksPerRow, kTileRows>;
  using WCopy = CopyRounds<kWChunksPerRow, kTileCols>;
  using ScaleCopy = CopyRounds<kScaleRowBytes / 4, kTileCols>;

  // The block copies stage `stage` of its slice into `slot`: A's rows (rows
  // past M zero-filled: a row of A only meets its own outputs, which are
  // not stored), W's codes and scales (rows past N copy row N - 1, likewise).
  // Steps past the slice are not copied; the warps that would read them
  // skip them.
  template <class Ctx>
  NVH_HD static void issue_stage(Ctx& ctx, const Params& p, const Tile& tile, int64_t stage,
                                 uint8_t* slot) {
    const uint32_t tid = ctx.thread_idx().x;
    const int64_t first_step = tile.slice.first + stage * kKWarps;
    const int64_t k0 = first_step * kStepK;
    const int64_t steps_left = tile.slice.end - first_step;
    const uint32_t steps = static_cast<uint32_t>(steps_left < kKWarps ? steps_left : kKWarps);
    {
      const uint32_t chunk = tid % kAChunksPerRow, row0 = tid / kAChunksPerRow;
      if (NVFP4_PROBE(chunk < steps * (kStepK / 8))) {
        const uint32_t last = fused_last_row(p.M, tile.m0, kTileRows);
        const auto* base = reinterpret_cast<const uint8_t*>(p.A + tile.m0 * p.K + k0) + 16 * chunk;
        const auto pitch = static_cast<uint32_t>(p.K * 2);
        NVH_UNROLL
        for (uint32_t i = 0; i < ACopy::kRounds; ++i) {
          const uint32_t row = row0 + i * ACopy::kRowsPerRound;
          ctx.cp_async16_or_zero(slot + a_offset(row, chunk), fused_row_of(base, row, last, pitch),
                                 row <= last);
        }
      }
    }
    {
      const uint32_t chunk = tid % kWChunksPerRow, row0 = tid / kWChunksPerRow;
      if (NVFP4_PROBE(chunk < steps * (kStepK / 32))) {
        const uint32_t last = fused_last_row(p.N, tile.n0, kTileCols);
        const uint8_t* base = p.packed + tile.n0 * (p.K / 2) + k0 / 2 + 16 * chunk;
        NVH_UNROLL
        for (uint32_t i = 0; i < WCopy::kRounds; ++i) {
          const uint32_t row = row0 + i * WCopy::kRowsPerRound;
          ctx.cp_async16(slot + w_offset(row, chunk),
                         fused_row_of(base, row, last, static_cast<uint32_t>(p.K / 2)));
        }
      }
    }
    {
      // Scales: 4 bytes (64 k of one row) a copy.
      constexpr uint32_t kScaleWords = kScaleRowBytes / 4;
      const uint32_t word = tid % kScaleWords, row0 = tid / kScaleWords;
      if (NVFP4_PROBE(word < 2 * steps)) {
        const uint32_t last = fused_last_row(p.N, tile.n0, kTileCols);
        const uint8_t* base = p.scales + tile.n0 * (p.K / 16) + k0 / 16 + 4 * word;
        NVH_UNROLL
        for (uint32_t i = 0; i < ScaleCopy::kRounds; ++i) {
          const uint32_t row = row0 + i * ScaleCopy::kRowsPerRound;
          ctx.cp_async4(slot + scale_offset(row) + 4 * word,
                        fused_row_of(base, row, last, static_cast<uint32_t>(p.K / 16)));
        }
      }
    }
  }

  // Lane (g, t)'s share of its warp's step for W's row `row` of the tile:
  // chunk 4 kw + t (codes 32t on of the step) and its two block scales.
  NVH_HD static GemvMma::RowStep row_step(const uint8_t* slot, uint32_t row, int kw, int t) {
    const nvh::U32x4 v = nvh::load_generic_u32x4(slot + w_offset(row, 4 * kw + t));
    const uint16_t scales = nvh::load_generic_u16(slot + scale_offset(row) + 8 * kw + 2 * t);
    return GemvMma::RowStep{{v.x, v.y, v.z, v.w}, scales};
  }

  // Where a warp sits in the block, and its lane in the mma's layout.
  struct WarpPlace {
    int mw, nw, kw, g, t;
    NVH_HD uint32_t a_row(int i) const { return 16 * (kMTiles * mw + i) + g; }
    NVH_HD uint32_t w_row(int j) const { return 8 * (kNTiles * nw + j) + g; }
  };

  // One warp's step of one stage: its rows' codes and scales, then per word
  // q the weight pairs of every row, then for every tile of A the
  // activations of the same k and one mma per half and row tile.
  // d[i][j] holds tile i of A times tile j of W.
  template <nvh::HalfKind kKind, bool kContract, class Ctx>
  NVH_HD static void mma_step(Ctx& ctx, const uint8_t* slot, const WarpPlace& w, float gs,
                              float d[kMTiles][kNTiles][4]) {
    GemvMma::RowStep rows[kNTiles];
    GemvMma::StepScales<kKind, kContract> scales[kNTiles];
    NVH_UNROLL
    for (int j = 0; j < kNTiles; ++j) {
      rows[j] = row_step(slot, w.w_row(j), w.kw, w.t);
      scales[j] = GemvMma::StepScales<kKind, kContract>(rows[j].scales, gs);
    }
    NVH_UNROLL
    for (int q = 0; q < 4; ++q) {
      uint32_t b[kNTiles][4];
      NVH_UNROLL
      for (int j = 0; j < kNTiles; ++j) scales[j].weights(rows[j], q, b[j]);
      const uint32_t chunk = 16 * w.kw + 4 * w.t + q;
      NVH_UNROLL
      for (int i = 0; i < kMTiles; ++i) {
        uint32_t a_lo[4], a_hi[4];
        GemvMma::pair_activations(nvh::load_generic_u32x4(slot + a_offset(w.a_row(i), chunk)),
                                  a_lo);
        GemvMma::pair_activations(nvh::load_generic_u32x4(slot + a_offset(w.a_row(i) + 8, chunk)),
                                  a_hi);
        NVH_UNROLL
        for (int h = 0; h < 2; ++h) {
          const uint32_t a[4] = {a_lo[2 * h], a_hi[2 * h], a_lo[2 * h + 1], a_hi[2 * h + 1]};
          NVH_UNROLL
          for (int j = 0; j < kNTiles; ++j) {
            const uint32_t bj[2] = {b[j][2 * h], b[j][2 * h + 1]};
            ctx.mma_m16n8k16(d[i][j], a, bj, d[i][j], kKind);
          }
        }
      }
    }
  }

  // The stages of one tile of the output's slice, streamed kStages deep:
  // wait for stage s, barrier (every thread's copies of s landed, and every
  // warp is done with the slot about to be refilled), issue stage
  // s + kStages - 1, compute s. Empty commit groups keep the wait count uniform.
  template <nvh::HalfKind kKind, bool kContract, class Ctx>
  NVH_HD static void stream(Ctx& ctx, const Params& p, const Tile& tile, const WarpPlace& w,
                            float gs, float d[kMTiles][kNTiles][4]) {
    uint8_t* smem = ctx.template shared_mem<uint8_t>();
    const int32_t steps = static_cast<int32_t>(tile.slice.end - tile.slice.first);
    const int32_t stages = (steps + kKWarps - 1) / kKWarps;
    for (int s = 0; s < kStages - 1; ++s) {
      if (NVFP4_PROBE(s < stages)) issue_stage(ctx, p, tile, s, smem + s * kStageBytes);
      ctx.cp_async_commit();
    }
    // The slots of stage s and of stage s + kStages - 1, wrapping (no modulo).
    int read_slot = 0, fill_slot = kStages - 1;
    for (int32_t s = 0; NVFP4_PROBE(s < stages); ++s) {
      ctx.template cp_async_wait<kStages - 2>();
      ctx.sync_threads();
      const int32_t next = s + kStages - 1;
      if (NVFP4_PROBE(next < stages)) {
        issue_stage(ctx, p, tile, next, smem + fill_slot * kStageBytes);
      }
      ctx.cp_async_commit();
      if (NVFP4_PROBE(s * kKWarps + w.kw < steps)) {
        mma_step<kKind, kContract>(ctx, smem + read_slot * kStageBytes, w, gs, d);
      }
      read_slot = read_slot == kStages - 1 ? 0 : read_slot + 1;
      fill_slot = fill_slot == kStages - 1 ? 0 : fill_slot + 1;
    }
    ctx.template cp_async_wait<0>();
    ctx.sync_threads();  // every warp is done with the stages: they become the parking lot
  }

  // The K parts of a warp tile meet: parts 1.. park their sums in shared
  // memory, part 0 adds them in order 1, 2, ... (fixed: no timing in the
  // result). Returns whether this warp holds the tile's sum.
  template <class Ctx>
  NVH_HD static bool meet(Ctx& ctx, const WarpPlace& w, float d[kMTiles][kNTiles][4]) {
    float* parked = ctx.template shared_mem<float>();
    const uint32_t lane = ctx.lane();
    const auto at = [&](int kw, int e) {
      const int slot = (w.mw * kNWarps + w.nw) * (kKWarps - 1) + (kw - 1);
      return parked + (slot * kSums + e) * 32 + lane;
    };
    if (NVFP4_PROBE(w.kw != 0)) {
      NVH_UNROLL
      for (int e = 0; e < kSums; ++e)
        nvh::store_f32(at(w.kw, e), d[e / (4 * kNTiles)][(e / 4) % kNTiles][e % 4]);
    }
    ctx.sync_threads();
    if (NVFP4_PROBE(w.kw != 0)) return false;
    NVH_UNROLL
    for (int kw = 1; kw < kKWarps; ++kw) {
      NVH_UNROLL
      for (int e = 0; e < kSums; ++e) {
        float& sum = d[e / (4 * kNTiles)][(e / 4) % kNTiles][e % 4];
        sum = nvh::add_rn(sum, nvh::load_generic_f32(at(kw, e)));
      }
    }
    return true;
  }

  // Where the warp tile's sums go: with one slice, Y (scaled, bias, one
  // rounding); with several, this slice's fp32 parts as they are.
  template <nvh::HalfKind kKind>
  NVH_HD static void store(const Params& p, const Tile& tile, const WarpPlace& w, float restore,
                           int64_t z, const float d[kMTiles][kNTiles][4]) {
    NVH_UNROLL
    for (int i = 0; i < kMTiles; ++i) {
      NVH_UNROLL
      for (int j = 0; j < kNTiles; ++j) {
        NVH_UNROLL
        for (int e = 0; e < 4; ++e) {
          const int64_t m = tile.m0 + w.a_row(i) + (e >= 2 ? 8 : 0);
          const int64_t n = tile.n0 + 8 * (kNTiles * w.nw + j) + 2 * w.t + (e % 2);
          if (NVFP4_PROBE(m >= p.M || n >= p.N)) continue;
          if (NVFP4_PROBE(p.k_slices == 1)) {
            store_gemv_output<kKind>(p, nvh::mul_rn(d[i][j][e], restore), m, n);
          } else {
            nvh::store_f32(p.part(z, m, n), d[i][j][e]);
          }
        }
      }
    }
  }

  // One tile of the output's slice: stream K, meet, and store.
  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void run_tile(Ctx& ctx, const Params& p, const Tile& tile, const WarpPlace& w) {
    float d[kMTiles][kNTiles][4];
    NVH_UNROLL
    for (int e = 0; e < kSums; ++e) {
      d[e / (4 * kNTiles)][(e / 4) % kNTiles][e % 4] = 0.0f;  // +0: the contract's sums start there
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
      store<kKind>(p, tile, w, restore, ctx.block_idx().z, d);
    }
    // The next tile's prologue refills the stages the parking lot used.
    ctx.sync_threads();
  }

  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void run_kind(Ctx& ctx, const Params& p) {
    const int warp = static_cast<int>(ctx.warp()), lane = static_cast<int>(ctx.lane());
    const WarpPlace w{warp / (kKWarps * kNWarps), (warp / kKWarps) % kNWarps, warp % kKWarps,
                      lane / 4, lane % 4};
    const int64_t n0 = p.n_begin + int64_t{ctx.block_idx().x} * kTileCols;
    const Slice slice = slice_of(p.K, p.k_slices, ctx.block_idx().z);
    for (int64_t mt = ctx.block_idx().y; NVFP4_PROBE(mt < m_tiles(p.M)); mt += ctx.grid_dim().y) {
      run_tile<kKind>(ctx, p, Tile{mt * kTileRows, n0, slice}, w);
    }
    // With k_slices > 1, prefill_fused_sum may start launching now: it is
    // launched to overlap this kernel and waits for it to finish. The
    // trigger takes effect once every block of this grid has made it or
    // exited, so the sum's blocks can never hold an SM a block of this grid
    // still needs. After the last tile is what was timed (PERF.md); earlier
    // would start the sum's launch sooner, not timed.
    ctx.launch_dependents();
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

// The block shapes the plan (prefill_fused_plan.h) picks from, by M: rows
// of A x rows of W a block holds. Warp tiles 16 x 32 (m16n64), 32 x 32
// (m32n128), 64 x 32 (m64n128, m128n128); a 64 x 64 warp tile spilled
// (255 registers). Stages: as many as fit in 227 KB.
using PrefillFusedM16N64 = PrefillFused<1, 4, 1, 2, 4, 6>;
using PrefillFusedM32N128 = PrefillFused<2, 4, 1, 4, 2, 6>;
using PrefillFusedM64N128 = PrefillFused<4, 4, 1, 4, 2, 4>;
using PrefillFusedM128N128 = PrefillFused<4, 4, 2, 4, 1, 5>;

}  // namespace nvfp4
