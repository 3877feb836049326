// prefill_fused's warpgroup-mma kernel (FusedShape::w128n128, and w256n128
// with two tiles of A a block): the same operator as prefill_fused.cuh
// (packed weights decoded on chip, no scratch, fp32 sums, the contract's
// weights) with sm_90a's wgmma in place of mma.sync, for M > 64 where the
// plan takes it (prefill_fused_plan.h).
//
// Two tiles of A (kATiles = 2, M > 128): each weight is decoded once and
// multiplied into both 128-row tiles (one wgmma of N = 256 a k16 step over
// the two tiles' boxes side by side, 128 accumulators a thread), where one
// tile a block decoded it once a tile: the decode is most of a stage's
// instructions (PERF.md). One wgmma of N = 256 in place of two of N = 128
// over the same registers made the two-tile plans 2-7 % faster on the
// H200 and the 8K replay 469.2 -> 446.1 ms (PERF.md, 2026-12-04). A stage
// then takes 75 KB, so three stages fit, and it is decoded in two parts
// of four k16 steps whose register sets alternate (a whole stage's two
// sets beside 128 accumulators spilled 400 bytes).
//
// Roles: Y^T = W A^T. The weights take wgmma's A slot, from registers: each
// of a block's two warpgroups owns 64 rows of W, each of its warps 16, in
// mma.m16n8k16's A fragment layout. The activations take the B slot, from
// shared memory: the block's rows of A (wgmma's N, 128 a tile) of one 64-k
// half of a stage, 128 bytes a row in the 128-byte-swizzled layout wgmma reads
// (device_ctx.cuh), copied there by the TMA a box a tile (tensor_map.h: the
// map swizzles as wgmma reads; rows past M land as zeros). So
// A's k order is fixed, and each lane (g, t) must feed k = 2t, 2t + 1 of
// every 8 k of its two rows g and g + 8: byte t of every 4-byte word of the
// row's packed codes. A warp's rows of a stage (64 bytes each) sit in shared
// memory too; a lane reads its rows' four 16-byte chunks whole (the four
// lanes of a quad read the same addresses: one broadcast) and picks byte t
// of each word with prmt. Such a byte holds the codes of k and k + 1 in its
// two nibbles, while SpreadDecode pairs codes i and i + 4 of a word; one
// nibble shuffle puts a word's even codes in its low half and its odd codes
// in its high half, so that SpreadDecode's pair i is byte i's two codes, low
// k in the low half, as the A fragment has them (lane_word,
// prefill_fused_prepack.cuh). With W prepacked (params.prepacked: codes
// reordered once by prefill_fused_prepack.cuh, which applies that very
// lane_word) a lane loads its words as they are, 8 bytes for two, with no
// prmt or shuffle: the same registers, the same bits. Which order a kernel
// reads is its template's (kPrepacked, a kernel each): with both orders'
// loads in one kernel, a uniform branch apart, the prepacked calls took
// 1-4 % longer, the contract order's 3-7 %, the 8K replay 2.5 % (H100,
// PERF.md, 2026-12-07).
//
// Weights follow the contract on gemv_mma's two paths, chosen per thread
// from g = weight_scale_2 (the same for every thread): fast for g = 2^e in
// the dtype's window (each pair times its E4M3 scale pair with one HMUL2,
// the fp32 sum times 2^p at the end: GemvMma::FastScales), else the contract
// path (each weight round_to_dtype(e2m1 * fl32(e4m3 * g)) in fp32). A
// lane's rows need all 8 block scales of a stage, since its bytes span the
// stage's 128 k.
//
// Pipeline: kStages stages of 128 k in shared memory, block-wide, one
// barrier a stage. Before the barrier each thread waits for its own
// cp.async copies (W's codes and scales, which only plain loads read);
// after it, the block issues the copies of the stage kStages - 2 ahead into
// the slot the stage two back used (thread 0 A's boxes by TMA, on the
// slot's mbarrier, expecting their bytes; every thread its cp.asyncs),
// decodes this stage (or its part) into one of two sets of A registers,
// waits on the slot's mbarrier for A, issues its wgmmas (8 k16 steps, or 4,
// over each tile of A) as one group, and waits until only that group is in
// flight: the group before, which read the other set of registers (and, a
// stage back, the slot the next copies overwrite), has retired. A's copies
// by the TMA, in place of 16 cp.asyncs a thread a stage (two tiles), took
// 36864 x 5120 at M = 256 from 199.2 to 176.3 us on the H200, and 0.85 to
// 1.01x elsewhere (PERF.md, 2026-12-03).
//
// K split across blocks and M tiles on grid.y past 65535: as
// prefill_fused.cuh (Slice, k_slices, parts, prefill_fused_sum).
#pragma once

#include <array>
#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "harness/tensor_map.h"
#include "kernels/nvfp4_matmul/fp4_codec.cuh"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"
#include "kernels/nvfp4_matmul/gemv_output.cuh"
#include "kernels/nvfp4_matmul/prefill_fused.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_prepack.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_sum.cuh"
#include "kernels/nvfp4_matmul/probes.h"

namespace nvfp4 {

// A launch's part in a tail split that overlaps the launch before it
// (LaunchShape::lets_dependents_overlap, independent_of_prior_grid): the
// launch before lets the tail start once its blocks have started (leads);
// the tail's blocks wait for that grid before they exit (follows).
enum class FusedOverlap : uint8_t { none, leads, follows };

// The wgmma kernel's parameters: prefill_fused's, and the TMA's map of A
// (M rows of K 2-byte values, boxes of 128 rows of 64 k swizzled as wgmma
// reads them), which launch_fused makes from A.
struct PrefillFusedWgmmaParams : PrefillFusedParams {
  nvh::TensorMap2d a_map, w_map;
  std::array<nvh::TensorMap2d*, 2> tensor_maps() { return {&a_map, &w_map}; }
};

template <int kATilesArg>
struct PrefillFusedWgmmaTiles {
  static constexpr int kATiles = kATilesArg;  // 128-row tiles of A a block holds (1 or 2)
  static_assert(kATiles == 1 || kATiles == 2, "one or two tiles of A a block");
  static constexpr int kWarpGroups = 2;
  static constexpr uint32_t kMaxBlockThreads = 128 * kWarpGroups;
  static constexpr int kTileRows = 128 * kATiles;     // rows of A a block holds (wgmma's N a tile)
  static constexpr int kTileCols = 64 * kWarpGroups;  // rows of W a block holds (wgmma's M)
  static constexpr int64_t kStepK = 128;              // a stage's k
  static constexpr int kKWarps = 1;  // warps along K per tile (the warpgroups split W's rows)
  // One tile: five stages of 43 KB (the most that fit; three ahead of the
  // one being decoded); two tiles: three of 75 KB (one ahead). On the H200
  // (2026-12-02) the one-tile shape, 128 x 128 with two warpgroups, beat one
  // warpgroup per block (two blocks an SM, three stages) and, in a
  // standalone prototype timed beside cuBLAS and not kept, a 256-row N at M
  // = 128 to 512; the two-tile shape, decoded in two parts a stage (below),
  // then beat it at M = 256 to 1024 (PERF.md).
  static constexpr int kStages = kATiles == 1 ? 5 : 3;
  static constexpr int kMinBlocksPerSM = 1;
  static constexpr uint32_t kAHalfBytes = 128 * 128;  // one 64-k half of a 128-row tile of A
  static constexpr uint32_t kATileBytes = 2 * kAHalfBytes;
  static constexpr uint32_t kABytes = kATiles * kATileBytes;
  // A row of W's codes in a stage is 64 bytes, copied by the TMA with the
  // 64-byte swizzle: the 8 rows a quarter-warp reads at once (two apart)
  // fall on 8 different 16-byte bank groups (w_chunk_offset).
  static constexpr uint32_t kWRowBytes = 64;
  static constexpr uint32_t kWBytes = kTileCols * kWRowBytes;
  static constexpr uint32_t kScaleRowBytes = kStepK / 16;  // 8
  static constexpr uint32_t kScaleBytes = kTileCols * kScaleRowBytes;
  // Stages start 1024-byte aligned: A's halves are wgmma's swizzled tiles.
  static constexpr uint32_t kStageBytes = (kABytes + kWBytes + kScaleBytes + 1023) / 1024 * 1024;
  // One tile of A: each thread parks the offset of its first prepacked
  // words (prepacked_word_offset of its first row, pair 0) in shared memory
  // once and reads it back each stage, then an add and a XOR a row
  // (prepacked_word_from), where ptxas, short of registers, recomputed it
  // from the row and lane every stage (17 instructions a row; SASS): 1.4 to
  // 3.2 % off w128n128's calls on an H100 (PERF.md, 2026-12-07). With two tiles
  // the read-back made the calls 0-3 % slower (their stage is decoded in two
  // parts, the offset held across both): they compute it in place.
  static constexpr bool kParksPrepackedFirst = kATiles == 1;
  // Whether the kernel of W's order kPrepacked parks that offset: the
  // contract order's kernels have none (they still reserve the bytes: the
  // launch's shared memory is the shape's, one block an SM either way).
  template <bool kPrepacked>
  static constexpr bool kParks = (kParksPrepackedFirst && kPrepacked);
  static constexpr uint32_t kParkedFirstBytes = kParksPrepackedFirst ? 4 * kMaxBlockThreads : 0;
  // The stages, two mbarriers a stage (A's boxes land on one, W's on the
  // other), the parked offsets, and 1024 bytes to align the first stage
  // (dynamic shared memory is only 16-byte aligned).
  static constexpr uint32_t kSharedBytes =
      kStages * kStageBytes + 16 * kStages + kParkedFirstBytes + 1024;
  static_assert(kSharedBytes <= 227 * 1024, "a block's shared memory on sm_90");
  static constexpr int kTileSums = 64;  // accumulators a thread holds a tile of A (wgmma's N / 2)
  static constexpr int kSums = kATiles * kTileSums;

  using Params = PrefillFusedWgmmaParams;
  static constexpr uint32_t kMaxGridRows = 65535;

  NVH_HD static int64_t m_tiles(int64_t M) { return (M + kTileRows - 1) / kTileRows; }
  static nvh::LaunchShape shape(const PrefillFusedParams& p) {
    nvh::LaunchShape s = fused_tile_launch<PrefillFusedWgmmaTiles>(p);
    s.reads_shared_async = true;
    return s;
  }

  using Slice = PrefillFusedM128N128::Slice;
  static_assert(PrefillFusedM128N128::kStepK == kStepK, "the same slices as prefill_fused");
  struct Tile {
    int64_t m0, n0;
    Slice slice;
  };

  // The map of A the TMA copies a stage's boxes from (tensor_map.h).
  static nvh::TensorMap2d a_map(const PrefillFusedParams& p) {
    return nvh::make_tensor_map_2d(p.A, 2, static_cast<uint64_t>(p.M), static_cast<uint64_t>(p.K),
                                   static_cast<uint64_t>(p.K) * 2, 128, 64, nvh::TmaSwizzle::b128);
  }
  // The map of W's packed codes: N rows of K / 2 bytes, boxes of a tile's
  // 128 rows of a stage's 64 bytes.
  static nvh::TensorMap2d w_map(const PrefillFusedParams& p) {
    return nvh::make_tensor_map_2d(p.packed, 1, static_cast<uint64_t>(p.N),
                                   static_cast<uint64_t>(p.K / 2), static_cast<uint64_t>(p.K / 2),
                                   kTileCols, kWRowBytes, nvh::TmaSwizzle::b64);
  }
  static Params with_a_map(const PrefillFusedParams& p) {
    Params w;
    static_cast<PrefillFusedParams&>(w) = p;
    w.a_map = a_map(p);
    w.w_map = w_map(p);
    return w;
  }

  // Byte offsets in a stage: A's 16-byte chunk c (0..15, 8 k each) of row r
  // (half c / 8, chunk c % 8 swizzled by r % 8), where the TMA's box of that
  // tile's half puts it and wgmma reads it (the layout, which the tests
  // hold the TMA's rule and the wgmma steps to); W's row r; its scales.
  // Where the TMA's box of tile t's half h lands: every tile's box of a
  // half side by side, so that one wgmma of N = 128 kATiles reads a k16
  // step of all of them (row 128 t + rt at rt * 128 past the half's first).
  NVH_HD static constexpr uint32_t a_box(uint32_t t, uint32_t h) {
    return (h * kATiles + t) * kAHalfBytes;
  }
  NVH_HD static uint32_t a_offset(uint32_t r, uint32_t c) {
    const uint32_t tile = kATiles == 1 ? 0 : r / 128, rt = r - 128 * tile;
    return a_box(tile, c / 8) + rt * 128 + (((c % 8) ^ (rt % 8)) * 16);
  }
  NVH_HD static uint32_t w_offset(uint32_t r) { return kABytes + r * kWRowBytes; }
  // W's 16-byte chunk j (0..3) of row r, where the 64-byte swizzle puts it
  // (W's rows start 512-byte aligned: tensor_map.h).
  NVH_HD static uint32_t w_chunk_offset(uint32_t r, uint32_t j) {
    return w_offset(r) + 16 * (j ^ ((r >> 1) & 3u));
  }
  // Prepacked codes (prefill_fused_prepack.cuh): lane t's words of 32-k
  // groups 2p and 2p + 1 of row r, 8 bytes in 16-byte chunk 2 (t / 2) + p,
  // half t % 2. A half-warp's 64-bit loads (rows g = 0..3, t = 0..3) then hit
  // the 32 banks once each: rows two apart land in the same 128 bytes, and
  // the swizzle's XOR of 1 moves them from chunks {p, 2 + p} to the other two.
  NVH_HD static uint32_t prepacked_word_offset(uint32_t r, uint32_t t, uint32_t p) {
    const uint32_t at = prepacked_byte(t, 2 * p);
    return w_chunk_offset(r, at / 16) + at % 16;
  }
  // The same offset for row r + 8h from `first`, prepacked_word_offset(r,
  // t, 0): 8h rows on, with the swizzle's (r / 2) % 4 unchanged; pair 1 is
  // the other chunk of the two (byte offset bit 4, which nothing else in
  // the offset sets).
  NVH_HD static uint32_t prepacked_word_from(uint32_t first, uint32_t h, uint32_t p) {
    return (first + 8 * kWRowBytes * h) ^ (16 * p);
  }
  static_assert(kABytes % 512 == 0, "W's box on the 64-byte swizzle's atom");
  NVH_HD static uint32_t scale_offset(uint32_t r) { return kABytes + kWBytes + r * kScaleRowBytes; }

  // A thread's share of the scales a stage (a word of one of the tile's 128
  // rows: 256 threads, 2 words a row), and where its word of the slice's
  // first stage comes from; stage s's is kScaleRowBytes * s on. Made once a
  // tile: from p, the tile and the stage every stage, the address took
  // about 30 instructions a stage (SASS, 2026-12-07).
  struct ScaleShare {
    uint32_t to;  // offset in a slot
    const uint8_t* from;
  };
  NVH_HD static ScaleShare scale_share(const Params& p, const Tile& tile, uint32_t tid) {
    const uint32_t word = tid % 2, row = tid / 2;
    const uint32_t w_last = fused_last_row(p.N, tile.n0, kTileCols);
    const uint8_t* base =
        p.scales + tile.n0 * (p.K / 16) + tile.slice.first * kScaleRowBytes + 4 * word;
    return {scale_offset(row) + 4 * word,
            fused_row_of(base, row, w_last, static_cast<uint32_t>(p.K / 16))};
  }

  // The block copies stage `stage` of its slice into `slot`: thread 0 W's
  // box (128 rows of 64 bytes) on `w_bar` and A's kATiles x 2 boxes (128
  // rows of 64 k) on `a_bar` by TMA, each expecting its bytes; every thread
  // its share of the scales by cp.async (a row's 8 bytes a stage are below
  // the TMA's 16-byte box row).
  template <class Ctx>
  NVH_HD static void issue_stage(Ctx& ctx, const Params& p, const Tile& tile, uint32_t stage,
                                 const ScaleShare& scales, uint8_t* slot, uint64_t* a_bar,
                                 uint64_t* w_bar) {
    const uint32_t tid = ctx.thread_idx().x;
    const int64_t k0 = (tile.slice.first + stage) * kStepK;
    if (tid == 0) {
      ctx.mbarrier_arrive_expect_tx(w_bar, kWBytes);
      ctx.tma_load_2d_streaming(slot + w_offset(0), p.w_map, static_cast<int32_t>(k0 / 2),
                                static_cast<int32_t>(tile.n0), w_bar);
      ctx.mbarrier_arrive_expect_tx(a_bar, kABytes);
      NVH_UNROLL
      for (int t = 0; t < kATiles; ++t) {
        NVH_UNROLL
        for (int h = 0; h < 2; ++h) {
          ctx.tma_load_2d(slot + a_box(t, h), p.a_map, static_cast<int32_t>(k0 + 64 * h),
                          static_cast<int32_t>(tile.m0 + 128 * t), a_bar);
        }
      }
    }
    ctx.cp_async4(slot + scales.to, scales.from + stage * kScaleRowBytes);
  }

  // A stage is decoded and multiplied in kParts parts of kPartSteps k16
  // steps: one part with one tile of A; two with two, so that the part's A
  // registers and the previous part's (still read by its wgmmas) fit beside
  // the 128 accumulators (a whole stage's two sets spilled 400 bytes).
  static constexpr int kParts = kATiles;
  static constexpr int kPartSteps = 8 / kParts;

  // The block scales of a part of a stage's row (kPartSteps of them, from
  // 4-byte words at `at`), as each path uses them.
  template <nvh::HalfKind kKind, bool kContract>
  struct RowScales {
    uint32_t pairs[kPartSteps];  // fast: (s f, s f) for the HMUL2
    float values[kPartSteps];    // contract: fl32(e4m3 * g)
    NVH_HD RowScales(const uint8_t* at, float g) {
      uint32_t words[kPartSteps / 4];
      NVH_UNROLL
      for (int w = 0; w < kPartSteps / 4; ++w) words[w] = nvh::load_generic_u32(at + 4 * w);
      NVH_UNROLL
      for (int b = 0; b < kPartSteps; b += 2) {
        const uint16_t two = static_cast<uint16_t>(words[b / 4] >> (8 * (b % 4)));
        if constexpr (kContract) {
          values[b] = dequant_scale(static_cast<uint8_t>(two), g);
          values[b + 1] = dequant_scale(static_cast<uint8_t>(two >> 8), g);
        } else {
          SpreadDecode<kKind>::scale_pairs(two, GemvMma::kFastFactor<kKind>, pairs + b);
        }
      }
    }
    // Pair `pair` (two weights of block `block` of the part) as the contract has them.
    NVH_HD uint32_t weights(uint32_t pair, int block) const {
      if constexpr (kContract) {
        constexpr float kUnbias = kKind == nvh::HalfKind::fp16 ? 0x1p14f : 0x1p126f;
        const float lo =
            nvh::mul_rn(nvh::half_bits_to_float(static_cast<uint16_t>(pair), kKind), kUnbias);
        const float hi =
            nvh::mul_rn(nvh::half_bits_to_float(static_cast<uint16_t>(pair >> 16), kKind), kUnbias);
        return nvh::pack_half2_rn(nvh::mul_rn(lo, values[block]), nvh::mul_rn(hi, values[block]),
                                  kKind);
      } else {
        return nvh::mul_half2<kKind>(pair, pairs[block]);
      }
    }
  };

  // Where a thread sits: its warpgroup's and warp's rows of W, its lane;
  // with kParksPrepackedFirst, where it parks its first prepacked offset.
  struct Place {
    uint32_t wg, warp, g, t;
    uint32_t* parked_first;
    NVH_HD uint32_t w_row0() const { return 64 * wg + 16 * warp + g; }
    NVH_HD static Place of(uint32_t tid, uint32_t* parked_first) {
      const uint32_t lane = tid % 32;
      return Place{tid / 128, (tid / 32) % 4, lane / 4, lane % 4, parked_first};
    }
    // The offset the kernel reads its first prepacked words at (the rest
    // from it: prepacked_word_from).
    NVH_HD uint32_t prepacked_first() const { return prepacked_word_offset(w_row0(), t, 0); }
  };

  // Lane t's words of its row w_row0() + 8h in part `part` of a stage: word
  // jj is the row's 32-k group j = part * kPartSteps / 2 + jj, with code 32j + 8i + 2t
  // in nibble i and code 32j + 8i + 2t + 1 in nibble 4 + i (i = 0..3), the
  // pairs SpreadDecode makes. In the contract's order the lane reads the
  // group's four 16-byte words whole (the quad reads the same addresses: one
  // broadcast), picks byte t of each with prmt and unshuffles its nibbles;
  // prepacked (prefill_fused_prepack.cuh), the words sit as the lane takes
  // them, two to 8 bytes, and one load gives them (`first`: the parked
  // offset, kParksPrepackedFirst).
  template <bool kPrepacked>
  NVH_HD NVH_INLINE static void lane_words(const uint8_t* slot, const Place& w, uint32_t h,
                                           int part, uint32_t first,
                                           uint32_t words[kPartSteps / 2]) {
    const uint32_t row = w.w_row0() + 8 * h, t = w.t;
    if constexpr (kPrepacked) {
      NVH_UNROLL
      for (int q = 0; q < kPartSteps / 4; ++q) {
        const uint32_t pair = static_cast<uint32_t>(part * (kPartSteps / 4) + q);  // j / 2
        const uint32_t at = kParksPrepackedFirst ? prepacked_word_from(first, h, pair)
                                                 : prepacked_word_offset(row, t, pair);
        const nvh::U32x2 v = nvh::load_generic_u32x2(slot + at);
        words[2 * q] = v.x;
        words[2 * q + 1] = v.y;
      }
    } else {
      NVH_UNROLL
      for (int jj = 0; jj < kPartSteps / 2; ++jj) {
        const int j = part * (kPartSteps / 2) + jj;
        words[jj] = lane_word(nvh::load_generic_u32x4(slot + w_chunk_offset(row, j)), t);
      }
    }
  }

  // Lane (g, t)'s A registers of part `part` of a stage: frag[s] for k16
  // step part * kPartSteps + s of the stage (half of it / 4, step % 4),
  // registers {row g, k 2t..} {row g + 8, k 2t..} {row g, k 2t + 8..} {row
  // g + 8, k 2t + 8..}: chunk 2s, then 2s + 1, of each row.
  template <nvh::HalfKind kKind, bool kPrepacked, bool kContract>
  NVH_HD NVH_INLINE static void decode_part(const uint8_t* slot, const Place& w, float g, int part,
                                            uint32_t first, uint32_t frag[kPartSteps][4]) {
    NVH_UNROLL
    for (uint32_t h = 0; h < 2; ++h) {
      const uint32_t row = w.w_row0() + 8 * h;
      const RowScales<kKind, kContract> scales(slot + scale_offset(row) + kPartSteps * part, g);
      uint32_t words[kPartSteps / 2];
      lane_words<kPrepacked>(slot, w, h, part, first, words);
      NVH_UNROLL
      for (int jj = 0; jj < kPartSteps / 2; ++jj) {
        uint32_t pairs[4];
        SpreadDecode<kKind>::pairs(words[jj], pairs);
        NVH_UNROLL
        for (int i = 0; i < 4; ++i) {
          const int chunk = 4 * jj + i;  // of the part
          frag[chunk / 2][2 * (chunk % 2) + h] = scales.weights(pairs[i], chunk / 2);
        }
      }
    }
  }

  // The block's ring of stages: kStages slots from `stages`, slot i's
  // mbarrier bars + i (A's boxes land on it), and the parity of each
  // slot's next phase (bit i; every thread waits on every phase, so every
  // thread keeps the same bits). A tile's stage s sits in slot s %
  // kStages: `read`, the slot of the stage being decoded, and `fill`, of
  // the one kStages - 2 ahead, step with the stages (restart, next), where
  // s % kStages on a 64-bit s took about 20 instructions a stage (SASS,
  // 2026-12-07). With the scales' addresses (ScaleShare) that is 95 -> 51
  // instructions before the decode a stage, and 0.95-0.99x the calls' time
  // on an H100 (PERF.md).
  struct Ring {
    uint8_t* stages;
    uint64_t* bars;  // kStages for A's boxes, then kStages for W's
    uint32_t phases;
    uint32_t read = 0, fill = kStages - 2;
    NVH_HD uint8_t* slot(uint32_t i) const { return stages + i * kStageBytes; }
    NVH_HD uint64_t* a_bar(uint32_t i) const { return bars + i; }
    NVH_HD uint64_t* w_bar(uint32_t i) const { return bars + kStages + i; }
    NVH_HD void restart() {
      read = 0;
      fill = kStages - 2;
    }
    NVH_HD static uint32_t after(uint32_t i) { return i + 1 == kStages ? 0u : i + 1; }
    NVH_HD void next() {
      read = after(read);
      fill = after(fill);
    }
    // Waits until the read slot's box of W has landed (both of a slot's
    // barriers complete once a use: the same parity).
    template <class Ctx>
    NVH_HD void wait_for_w(Ctx& ctx) const {
      ctx.mbarrier_wait(w_bar(read), (phases >> read) & 1u);
    }
    // Waits until the read slot's boxes of A have landed; the slot's use is
    // done.
    template <class Ctx>
    NVH_HD void wait_for_a(Ctx& ctx) {
      ctx.mbarrier_wait(a_bar(read), (phases >> read) & 1u);
      phases ^= 1u << read;
    }
  };

  // One stage: wait for its cp.async copies and meet; copy the stage
  // kStages - 2 ahead; then for each part, decode it, (first part) wait for
  // A's boxes, issue its wgmmas (kPartSteps k16 steps, each one wgmma over
  // every tile of A) as one group and retire the group before it.
  template <nvh::HalfKind kKind, bool kPrepacked, class Ctx>
  NVH_HD NVH_INLINE static void run_stage(Ctx& ctx, const Params& p, const Tile& tile,
                                          const Place& w, const ScaleShare& scales, Ring& ring,
                                          uint32_t s, uint32_t count, float g, bool contract,
                                          uint32_t frag[kParts][kPartSteps][4], float acc[kSums]) {
    ctx.template cp_async_wait<kStages - 3>();
    ctx.sync_threads();
    const uint32_t ahead = s + kStages - 2;
    if (NVFP4_PROBE(ahead < count)) {
      issue_stage(ctx, p, tile, ahead, scales, ring.slot(ring.fill), ring.a_bar(ring.fill),
                  ring.w_bar(ring.fill));
    }
    ctx.cp_async_commit();
    uint8_t* slot = ring.slot(ring.read);
    const uint32_t first = kParks<kPrepacked> ? nvh::load_generic_u32(w.parked_first) : 0u;
    ring.wait_for_w(ctx);
    NVH_UNROLL
    for (int part = 0; part < kParts; ++part) {
      // The path is a uniform branch around the decode alone: one stage loop
      // and one set of fragments for both (a loop a path, the branch taken
      // once a tile: the one-tile kernels spilled, the two-tile ones were
      // no faster; PERF.md, 2026-12-07).
      if (contract) {
        decode_part<kKind, kPrepacked, true>(slot, w, g, part, first, frag[part]);
      } else {
        decode_part<kKind, kPrepacked, false>(slot, w, g, part, first, frag[part]);
      }
      if (part == 0) ring.wait_for_a(ctx);  // after the decode, which needs only W
      ctx.wgmma_fence();
      NVH_UNROLL
      for (int local = 0; local < kPartSteps; ++local) {
        const int step = part * kPartSteps + local;
        ctx.template wgmma_m64k16<128 * kATiles>(
            acc, frag[part][local], slot + a_box(0, step / 4) + (step % 4) * 32, kKind);
      }
      ctx.wgmma_commit();
      ctx.template wgmma_wait<1>();
    }
    ring.next();
  }

  template <nvh::HalfKind kKind, bool kPrepacked, class Ctx>
  NVH_HD NVH_INLINE static void stream(Ctx& ctx, const Params& p, const Tile& tile, const Place& w,
                                       Ring& ring, float g, bool contract, float acc[kSums]) {
    // A slice's stages (K / 128 of them at most, K < 2^31) in 32 bits.
    const auto count = static_cast<uint32_t>(tile.slice.end - tile.slice.first);
    const ScaleShare scales = scale_share(p, tile, ctx.thread_idx().x);
    ring.restart();
    for (uint32_t s = 0; s < kStages - 2; ++s) {
      if (NVFP4_PROBE(s < count)) {
        issue_stage(ctx, p, tile, s, scales, ring.slot(s), ring.a_bar(s), ring.w_bar(s));
      }
      ctx.cp_async_commit();
    }
    if constexpr (kParts == 1) {
      // Two sets of A registers, the stage's and the one before's (still
      // being read by its wgmmas): the loop unrolled by two keeps each set
      // in registers.
      uint32_t frag[2][1][kPartSteps][4];
      uint32_t s = 0;
      for (; NVFP4_PROBE(s + 1 < count); s += 2) {
        run_stage<kKind, kPrepacked>(ctx, p, tile, w, scales, ring, s, count, g, contract, frag[0],
                                     acc);
        run_stage<kKind, kPrepacked>(ctx, p, tile, w, scales, ring, s + 1, count, g, contract,
                                     frag[1], acc);
      }
      if (NVFP4_PROBE(s < count)) {
        run_stage<kKind, kPrepacked>(ctx, p, tile, w, scales, ring, s, count, g, contract, frag[0],
                                     acc);
      }
    } else {
      // The two parts' sets alternate within each stage already.
      uint32_t frag[kParts][kPartSteps][4];
      for (uint32_t s = 0; NVFP4_PROBE(s < count); ++s) {
        run_stage<kKind, kPrepacked>(ctx, p, tile, w, scales, ring, s, count, g, contract, frag,
                                     acc);
      }
    }
    ctx.template wgmma_wait<0>();
    ctx.template cp_async_wait<0>();
  }

  // Where a thread's accumulator i sits (device_ctx.cuh): the row of A past
  // the tile's first plus 2t (tile i / kTileSums of A, 8 (e / 4) + e % 2
  // into it, e = i % kTileSums), and the row of W past w_row0 (0 or 8).
  struct AccPlace {
    int64_t row;
    int col;
  };
  NVH_HD static constexpr AccPlace acc_place(int i) {
    const int e = i % kTileSums;
    return {128 * (i / kTileSums) + 8 * (e / 4) + (e % 2), (e % 4) >= 2 ? 8 : 0};
  }

  // One slice: Y (scaled, bias, one rounding); several: this slice's fp32
  // parts.
  template <nvh::HalfKind kKind>
  NVH_HD static void store(const Params& p, const Tile& tile, const Place& w, float restore,
                           int64_t z, const float acc[kSums]) {
    if (NVFP4_PROBE(p.k_slices != 1)) {
      store_parts(p, tile, w, z, acc);
      return;
    }
    const bool whole = tile.m0 + kTileRows <= p.M && tile.n0 + kTileCols <= p.N;
    if (NVFP4_PROBE(whole)) {
      store_y<kKind, false>(p, tile, w, restore, acc);
    } else {
      store_y<kKind, true>(p, tile, w, restore, acc);
    }
  }

  // Y of a tile from one slice: the arithmetic of store_gemv_output (times
  // restore, the bias, one rounding), with the thread's two biases (W rows
  // w_row0 and w_row0 + 8) loaded once; kBounded (a tile at M's or N's
  // edge) skips the outputs past them, by how many rows and columns are
  // left past the thread's first, read once. Output by output, each with
  // its bias load, bounds and slice test, this epilogue took 12 % of the
  // two-tile kernel's stall samples and 21 instructions an output at 36864
  // x 5120, M = 256 (Nsight Compute's source counters, 2026-12-03); with the
  // kernel's parameters address-taken for the TMA, the compiler also
  // reloaded them and branched around each output.
  template <nvh::HalfKind kKind, bool kBounded>
  NVH_HD static void store_y(const Params& p, const Tile& tile, const Place& w, float restore,
                             const float acc[kSums]) {
    if (NVFP4_PROBE(p.bias != nullptr)) {
      store_y_with<kKind, kBounded, true>(p, tile, w, restore, acc);
    } else {
      store_y_with<kKind, kBounded, false>(p, tile, w, restore, acc);
    }
  }
  template <nvh::HalfKind kKind, bool kBounded, bool kBias>
  NVH_HD static void store_y_with(const Params& p, const Tile& tile, const Place& w, float restore,
                                  const float acc[kSums]) {
    const int64_t m0 = tile.m0 + 2 * w.t, n0 = tile.n0 + w.w_row0();
    const int64_t rows_left = p.M - m0, cols_left = p.N - n0;
    float bias[2] = {0.0f, 0.0f};
    if constexpr (kBias) {
      NVH_UNROLL
      for (int c = 0; c < 2; ++c) {
        if (!kBounded || NVFP4_PROBE(8 * c < cols_left)) bias[c] = load_bias<kKind>(p, n0 + 8 * c);
      }
    }
    const int64_t pitch = p.N;
    uint16_t* const y = p.Y;
    const int64_t first = m0 * pitch + n0;
    NVH_UNROLL
    for (int i = 0; i < kSums; ++i) {
      const AccPlace at = acc_place(i);
      if constexpr (kBounded) {
        if (!NVFP4_PROBE(at.row < rows_left && at.col < cols_left)) continue;
      }
      float v = nvh::mul_rn(acc[i], restore);
      if constexpr (kBias) v = nvh::add_rn(v, bias[at.col / 8]);
      nvh::store_u16(y + (first + at.row * pitch + at.col), nvh::round_to_half_bits(v, kKind));
    }
  }

  // This slice's fp32 parts of a tile (p.part(z, m, n) for each output in
  // Y), from the offset of the thread's first part and how many rows and
  // columns are left past it, read once. Output by output through p.part and
  // the bounds of p, the compiler, once the kernel took the address of its
  // parameters for the TMA, reloaded them and branched around each of the
  // 64 stores: 1100 more instructions, and the kernel's slowest part on the
  // K-split plans (Nsight Compute's source counters, 2026-12-03).
  NVH_HD static void store_parts(const Params& p, const Tile& tile, const Place& w, int64_t z,
                                 const float acc[kSums]) {
    const int64_t m0 = tile.m0 + 2 * w.t, n0 = tile.n0 + w.w_row0(), cols = p.cols();
    const int64_t rows_left = p.M - m0, cols_left = p.N - n0;
    float* const parts = p.parts;
    const int64_t first = (z * p.M + m0) * cols + (n0 - p.n_begin);
    NVH_UNROLL
    for (int i = 0; i < kSums; ++i) {
      const AccPlace at = acc_place(i);
      if (NVFP4_PROBE(at.row < rows_left && at.col < cols_left)) {
        nvh::store_f32(parts + (first + at.row * cols + at.col), acc[i]);
      }
    }
  }

  // The K split's slices added in the cluster's shared memory, in place of
  // prefill_fused_sum (FusedPlan::cluster_sum): a tile's kSlices blocks
  // (grid.z) run as one cluster (LaunchShape::cluster {1, 1, kSlices}, so
  // a block's rank is its slice). Each parks its fp32 sums in its drained
  // stages, meets the others, adds its 1 / kSlices of the tile's rows over
  // every block's sums in slice order (the order prefill_fused_sum adds the
  // parts in: the same bits), and stores Y; meeting again keeps its sums
  // until the others have read them. No parts through the L2, no second
  // kernel: on an H100 (2026-12-06, PERF.md) 8192 x 5120 at M = 256 took
  // 40.7 us where the same split's two kernels took 45.7 (0.89 to 0.97x on
  // the w256n128 plans that split in two; w128n128's 0.94 to 1.04x, not
  // taken). A first epilogue, a group of 4 outputs at a time with the
  // bias loaded at each store, lost to the two kernels on most shapes.
  // Rows of kSumPitch floats, 4 past the tile's columns: a warp's 32 stores
  // (8 columns g by 4 row pairs t) then fall on 32 banks.
  static constexpr uint32_t kSumPitch = kTileCols + 4;
  static_assert(kTileRows * kSumPitch * 4 <= kStages * kStageBytes, "the sums fit the stages");
  // The slice counts whose blocks meet in a cluster: two, and four with two
  // tiles of A (a tail split's, FusedPlan::tail_k_slices; the H200 holds 30
  // clusters of four of these blocks, PERF.md). Each is a kernel of its own.
  // (Clusters of three, for the splits of 40 tiles in three, were tried and
  // lost: PERF.md, 2026-12-06.)
  NVH_HD static constexpr bool adds_in_a_cluster(int32_t slices) {
    return slices == 2 || (kATiles == 2 && slices == 4);
  }
  // Each block adds 1 / kSlices of the tile's rows. A thread's outputs are 4
  // columns (one group, the same in every row it takes: the block's threads
  // cover 8 rows a pass) of 8 / kSlices rows at once, every slice's loads of
  // them (8 of 16 bytes, whatever kSlices) issued before the first add (the
  // reads of the other blocks' shared memory take the cluster's network),
  // the bias of its columns loaded once before any store.
  static constexpr uint32_t kQuads = kTileCols / 4;                  // groups of 4 a row
  static constexpr uint32_t kRowsAPass = kMaxBlockThreads / kQuads;  // 8
  static constexpr uint32_t kLoadsAtOnce = 8;

  template <nvh::HalfKind kKind, int kSlices, class Ctx>
  NVH_HD static void cluster_sum(Ctx& ctx, const Params& p, const Tile& tile, const Place& w,
                                 float restore, const float acc[kSums], uint8_t* stages) {
    static_assert(adds_in_a_cluster(kSlices), "a cluster's slice count");
    constexpr uint32_t kShareRows = kTileRows / kSlices, kRowsAtOnce = kLoadsAtOnce / kSlices;
    static_assert(kShareRows % (kRowsAPass * kRowsAtOnce) == 0, "whole passes over a share");
    float* sums = reinterpret_cast<float*>(stages);
    ctx.sync_threads();  // every warpgroup's wgmmas are done with the stages
    const uint32_t row0 = 2 * w.t, col0 = w.w_row0();
    NVH_UNROLL
    for (int i = 0; i < kSums; ++i) {
      const AccPlace at = acc_place(i);
      nvh::store_f32(sums + (row0 + at.row) * kSumPitch + col0 + at.col, acc[i]);
    }
    ctx.fence_proxy_async();  // a next tile's TMA copies land over the sums
    ctx.cluster_sync();
    const uint32_t tid = ctx.thread_idx().x, c = 4 * (tid % kQuads);
    const int64_t n = tile.n0 + c;
    float bias[4] = {};
    if (NVFP4_PROBE(p.bias != nullptr)) {
      for (int j = 0; j < 4; ++j) {
        if (n + j < p.N) bias[j] = load_bias<kKind>(p, n + j);
      }
    }
    const float* slice_sums[kSlices];
    NVH_UNROLL
    for (uint32_t z = 0; z < kSlices; ++z) slice_sums[z] = ctx.map_shared_rank(sums, z) + c;
    const uint32_t first = ctx.cluster_rank() * kShareRows + tid / kQuads;
    for (uint32_t pass = 0; pass < kShareRows / kRowsAPass; pass += kRowsAtOnce) {
      nvh::U32x4 v[kRowsAtOnce][kSlices];
      NVH_UNROLL
      for (uint32_t i = 0; i < kRowsAtOnce; ++i) {
        const uint32_t r = first + (pass + i) * kRowsAPass;
        NVH_UNROLL
        for (uint32_t z = 0; z < kSlices; ++z) {
          v[i][z] = nvh::load_generic_u32x4(slice_sums[z] + r * kSumPitch);
        }
      }
      NVH_UNROLL
      for (uint32_t i = 0; i < kRowsAtOnce; ++i) {
        const int64_t m = tile.m0 + first + (pass + i) * kRowsAPass;
        if (!NVFP4_PROBE(m < p.M)) continue;
        float sum[4];
        PrefillFusedSum::set_sums(v[i][0], sum);  // slice order, as prefill_fused_sum adds
        NVH_UNROLL
        for (uint32_t z = 1; z < kSlices; ++z) PrefillFusedSum::add_sums(v[i][z], sum);
        NVH_UNROLL
        for (int j = 0; j < 4; ++j) {
          if (NVFP4_PROBE(n + j < p.N)) {
            store_gemv_output_biased<kKind>(p, nvh::mul_rn(sum[j], restore), bias[j], m, n + j);
          }
        }
      }
    }
    ctx.cluster_sync();  // the other blocks are done reading this one's sums
  }

  // kClusterSlices: 0, the blocks store Y or parts (store); 2 or 4, the
  // blocks of a tile's K slices meet in a cluster (cluster_sum).
  template <nvh::HalfKind kKind, bool kPrepacked, int kClusterSlices = 0, class Ctx>
  NVH_HD static void run_tile(Ctx& ctx, const Params& p, const Tile& tile, const Place& w,
                              Ring& ring) {
    float acc[kSums];
    NVH_UNROLL
    for (int i = 0; i < kSums; ++i) acc[i] = 0.0f;  // +0: the contract's sums start there
    const float gs = nvh::load_generic_f32(p.global_scale);
    const bool fast = GemvMma::fast_g<kKind>(gs);
    stream<kKind, kPrepacked>(ctx, p, tile, w, ring, gs, !NVFP4_PROBE(fast), acc);
    const float restore = fast ? GemvMma::fast_scales<kKind>(gs).restore : 1.0f;
    if constexpr (kClusterSlices > 0) {
      cluster_sum<kKind, kClusterSlices>(ctx, p, tile, w, restore, acc, ring.stages);
    } else {
      store<kKind>(p, tile, w, restore, ctx.block_idx().z, acc);
    }
    ctx.sync_threads();  // the next tile's copies refill the stages
  }

  template <nvh::HalfKind kKind, bool kPrepacked, int kClusterSlices = 0,
            FusedOverlap kOverlap = FusedOverlap::none, class Ctx>
  NVH_HD static void run_kind(Ctx& ctx, const Params& p) {
    const uint32_t tid = ctx.thread_idx().x;
    const int64_t n0 = p.n_begin + int64_t{ctx.block_idx().x} * kTileCols;
    const Slice slice = PrefillFusedM128N128::slice_of(p.K, p.k_slices, ctx.block_idx().z);
    // Aligned by an offset from the shared array, not by a pointer made from
    // an integer: the compiler then still knows the stages are shared memory
    // and reads them with LDS (from an integer it emitted generic loads,
    // which take the long-scoreboard path; SASS, 2026-12-02).
    uint8_t* smem = ctx.template shared_mem<uint8_t>();
    const auto misalign = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(smem) % 1024);
    uint8_t* stages = smem + (1024 - misalign) % 1024;
    Ring ring{stages, reinterpret_cast<uint64_t*>(stages + kStages * kStageBytes), 0};
    uint32_t* const parked = reinterpret_cast<uint32_t*>(ring.bars + 2 * kStages) + tid;
    const Place w = Place::of(tid, kParks<kPrepacked> ? parked : nullptr);
    if constexpr (kParks<kPrepacked>) nvh::store_u32(parked, w.prepacked_first());
    if (tid == 0) {
      ctx.prefetch_tensor_map(p.a_map);
      ctx.prefetch_tensor_map(p.w_map);
      for (int i = 0; i < 2 * kStages; ++i)
        ctx.mbarrier_init(ring.bars + i, 1);  // thread 0 arrives
    }
    ctx.sync_threads();  // the inits, before any thread uses a barrier
    // The launch before a tail that overlaps it (FusedOverlap::leads): the
    // tail's launch touches nothing this grid does (independent_of_prior_grid)
    // and may start on the SMs its blocks leave, once every block has
    // started. Elsewhere the grid after may read what this one writes (a K
    // split's sum): at the end.
    if constexpr (kOverlap == FusedOverlap::leads) ctx.launch_dependents();
    for (int64_t mt = ctx.block_idx().y; NVFP4_PROBE(mt < m_tiles(p.M)); mt += ctx.grid_dim().y) {
      run_tile<kKind, kPrepacked, kClusterSlices>(ctx, p, Tile{mt * kTileRows, n0, slice}, w, ring);
    }
    // A tail ends after the grid it overlaps (FusedOverlap::follows): what
    // follows on the stream relies on both.
    if constexpr (kOverlap == FusedOverlap::follows) ctx.wait_prior_grid();
    ctx.launch_dependents();  // prefill_fused_sum, as prefill_fused.cuh says
  }
};

// One kernel a kind (launch_fused, prefill_fused_shapes.cuh, picks it by
// p.kind): with both kinds in one kernel ptxas gave it 255 registers and
// spilled 3.5 KB a thread, where each kind alone fits (2026-12-02). And one
// an order of W's codes (kPrepacked, picked by p.prepacked): the header
// comment says why.
using PrefillFusedWgmma = PrefillFusedWgmmaTiles<1>;

// kClusterSlices (2 or 4): the kernel of the plans whose slices meet in a
// cluster of that many blocks (FusedPlan::cluster_sum, tail_cluster_sum);
// kOverlap: the kernel of a launch a tail overlaps (leads) or of the tail
// (follows). Each a kernel of its own, so that the others' code is what it
// was (new code in this kernel has cost its main loop 5 to 13 % even
// untaken; one early launch_dependents() in every one-slice plan's kernel,
// 0.7 to 1.0 % on an H100: PERF.md, 2026-12-06).
template <nvh::HalfKind kKind, bool kPrepacked, int kATiles = 1, int kClusterSlices = 0,
          FusedOverlap kOverlap = FusedOverlap::none>
struct PrefillFusedWgmmaOf : PrefillFusedWgmmaTiles<kATiles> {
  using Params = PrefillFusedWgmmaParams;
  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    PrefillFusedWgmmaTiles<kATiles>::template run_kind<kKind, kPrepacked, kClusterSlices, kOverlap>(
        ctx, p);
  }
};

}  // namespace nvfp4
