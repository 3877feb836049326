// gemv_mma: the tensor-core decode GEMV for 0 < M <= 8, block_size == 16,
// K % 128 == 0 on sm >= 80, with mma.sync m16n8k16.
//
// The weights take the A slot (16 rows of W by 16 k) and the activations the
// B slot (16 k by 8 rows of A, so M <= 8 fits one mma). A warp owns one tile
// of 16 rows of W and a share of K in stages of 256: all of it when there are
// tiles enough to fill the GPU, else 2, 4 or 8 warps split K and meet in
// shared memory, adding their parts in a fixed order so the result does not
// depend on timing.
//
// The sum over k does not care which k sits in which fragment slot, as long as
// a weight and its activation sit in matching slots. So in each 128-k step of
// a stage each lane reads 32 consecutive codes of a row (one 16-byte chunk)
// and the activations of the same 32 k (16-byte loads), rather than the
// scattered bytes the PTX fragment layout would ask for: in mma j = 2q + h
// of a step, lane (g, t) puts physical k = 32t + 8q + 2h + {0, 4, 1, 5}
// where the layout has logical k = {2t, 2t+1, 2t+8, 2t+9}, for A and B
// alike. (Codes i and i + 4 of a word share a pair because the
// shift-and-mask decode places them with one shift; the activations are
// re-paired to match, one prmt per pair: once per block when A is pre-paired
// in shared memory, else per use, shared by the lane's two rows.)
//
// Weights follow the contract, round_to_dtype(e2m1 * fl32(e4m3 * g)), g =
// weight_scale_2 (DESIGN.md, "Special values"), on one of two paths chosen
// per thread from g (every thread reads the same g: a uniform branch):
//   * fast, g = 2^e in the dtype's window (kFastMinExp..kFastMaxExp): a
//     weight in the A slot is e2m1 * e4m3 * 2^(e - p), exact in fp16 and
//     bf16, decoded to 16-bit pairs without table lookups (SpreadDecode) and
//     scaled with one HMUL2 per pair; the fp32 sum is multiplied by 2^p
//     (FastScales::restore) before the bias. fp16: p = 14 + e, and in the
//     window (-14 <= e <= 4) every product and partial sum of either scale
//     is a normal fp32 number or zero, so scaling by 2^p commutes with every
//     rounding: the same bits as summing the contract's weights, for every A.
//     bf16 (-7 <= e <= 0): p = e + 7, the mma sums the contract's products
//     2^p <= 2^7 times smaller, which differs only where a product or
//     partial sum falls below 2^(p - 126) (tiny activations times tiny
//     weights): the exactness rule asks for a grid of 2^-142, not 2^-149,
//     so that no exact case does (reference/nvfp4_matmul/exactness.h, kMinGridExp).
//   * contract, any other g: each weight e2m1 * fl32(e4m3 * g) in fp32,
//     rounded to the dtype in pairs (contract_pairs), and the fp32 sum used
//     as it is.
//
// Weights and their scales stream in through shared memory with cp.async,
// a stage ahead (kPrePairedStages, kStagesFromA), so many bytes are in
// flight per warp without holding registers. The copy is shaped for the L2,
// which bounded this kernel when each lane copied its own bytes: on the
// H200 the L2's tag lookups ran at 79 % of their peak while DRAM ran at
// 45 %, one lookup per 32-byte sector filled from DRAM plus one per request
// from an SM (PERF.md). So every copy
// instruction asks for whole 128-byte rows (four sectors per request), the
// warp copying cooperatively and lanes then reading what others copied (a
// warp barrier between). A stage is therefore two 128-k steps, a half stage
// when K % 256 == 128. The scales come 16 bytes per row, past the L1, when
// that is aligned; else 4 bytes per lane, 8 rows per instruction, so they
// need only be 4-byte aligned, as dispatch.cc asks.
//
// The activations are read by every warp of every block, 16 bytes per lane
// per word. When all of A fits beside the pipeline (M * (2K + 64) bytes,
// kMaxPrePairedBytes) the block copies it into shared memory once, already
// re-paired, so a step's reads need no prmt and hit each bank once (the
// lm_head at M = 8 on the H200: 106.9 -> 98.2 us, and 90.2 -> 80.2 at M = 1,
// PERF.md). Else they come through the L1, re-paired per use.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/fp4_codec.cuh"
#include "kernels/nvfp4_matmul/gemv_output.cuh"
#include "kernels/nvfp4_matmul/probes.h"

namespace nvfp4 {

struct GemvMma {
  static constexpr uint32_t kWarps = 8;
  static constexpr uint32_t kMaxBlockThreads = kWarps * 32;
  // Three blocks (24 warps) per multiprocessor: registers capped near 85.
  static constexpr int kMinBlocksPerSM = 3;
  // One mma_step: 128 k, 32 codes of each of a lane's two rows.
  static constexpr int64_t kStepK = 128;
  // One pipeline stage: two steps, so a row's codes in a stage are one whole
  // 128-byte line, copied by one L2 request (see the header comment).
  static constexpr int64_t kStageK = 2 * kStepK;
  // Stages per warp when A is pre-paired in shared memory: two, one being
  // read while the next lands. With 24 warps that still keeps about 55 KB in
  // flight per multiprocessor; deeper pipelines (3 and 4 stages, measured in
  // the same run on the lm_head) were slower, most at M = 8, because the
  // shared memory they took shrank the L1 that then served the activations
  // (PERF.md).
  static constexpr int kPrePairedStages = 2;
  // Stages per warp when A is read from global memory (too large to
  // pre-pair, e.g. K = 25600): two as well. Deeper pipelines were slower
  // there too, 2 / 3 / 4 / 6 stages 29.8 / 31.7 / 33.3 / 46.5 us at
  // 5120 x 25600, M = 1, and likewise at M = 4 and 8 and at 4096 x 4096,
  // M = 8 (H200, kernel time, bench group depth, 2026-12-01): more bytes in
  // flight per warp is not what that shape lacks (PERF.md).
  static constexpr int kStagesFromA = 2;
  static constexpr uint32_t kRowBytes = kStageK / 2;        // 128: a row's codes in a stage
  static constexpr uint32_t kScaleRowBytes = kStageK / 16;  // 16: a row's scales in a stage
  static constexpr uint32_t kCodeBytes = 16 * kRowBytes;
  static constexpr uint32_t kStageBytes = kCodeBytes + 16 * kScaleRowBytes;  // 2304 per warp
  NVH_HD static constexpr uint32_t pipeline_bytes(int stages) {
    return kWarps * static_cast<uint32_t>(stages) * kStageBytes;
  }

  // A copied into shared memory, pre-paired, when it takes at most this many
  // bytes: three blocks of 8 x 2 x 2304 bytes of pipeline and this still fit
  // the H200's 228 KB per multiprocessor (1 KB per block is the driver's).
  static constexpr int64_t kMaxPrePairedBytes = 36 * 1024;
  // Row m of the pre-paired copy starts 2K + 64 bytes after row m - 1: the
  // 64 bytes move odd rows onto the other half of the banks (see
  // activation_pairs).
  NVH_HD static int64_t prepaired_row_bytes(int64_t K) { return 2 * K + 64; }
  NVH_HD static int64_t prepaired_bytes(int64_t M, int64_t K) { return M * prepaired_row_bytes(K); }
  NVH_HD static bool activations_fit(int64_t M, int64_t K) {
    return prepaired_bytes(M, K) <= kMaxPrePairedBytes;
  }

  struct Params : GemvOperands {
    uint32_t split;  // warps sharing one tile's K: 1, 2, 4 or 8
  };

  // The fast window g = 2^e, kFastMinExp <= e <= kFastMaxExp (header
  // comment). fp16: the window where every e2m1 * e4m3 * g is an fp16 value
  // (gemv_scalar.cuh derives it). bf16: -7..0, where the scale pairs keep
  // their one factor, 2^119 (an immediate, as the decode always had, so the
  // fast loop stays the one measured before; a factor following g would
  // hold one more register through a loop already at the 80-register cap),
  // and the sum is scaled by 2^(e + 7), at most 2^7 (the exactness rule's
  // margin); a power of two below 2^-7 takes the contract path.
  template <nvh::HalfKind kKind>
  static constexpr int kFastMinExp = kKind == nvh::HalfKind::fp16 ? -14 : -7;
  template <nvh::HalfKind kKind>
  static constexpr int kFastMaxExp = kKind == nvh::HalfKind::fp16 ? 4 : 0;

  template <nvh::HalfKind kKind>
  NVH_HD static bool fast_g(float g) {
    return is_power_of_two_in(g, kFastMinExp<kKind>, kFastMaxExp<kKind>);
  }

  // The fast path's two powers of two for g = 2^e in the window: `factor`
  // multiplies each E4M3 scale before the HMUL2 (SpreadDecode::scale_pairs:
  // 1 in fp16, 2^119 in bf16), `restore` the fp32 sum, so that factor *
  // restore = g * 2^kPairExp: g * 2^14 in fp16, g * 2^7 in bf16. Exact:
  // powers of two in range.
  struct FastScales {
    float factor, restore;
  };
  template <nvh::HalfKind kKind>
  static constexpr float kFastFactor = kKind == nvh::HalfKind::fp16 ? 1.0f : 0x1p119f;
  template <nvh::HalfKind kKind>
  NVH_HD static FastScales fast_scales(float g) {
    constexpr float kRestore = kKind == nvh::HalfKind::fp16 ? 0x1p14f : 0x1p7f;
    return {kFastFactor<kKind>, nvh::mul_rn(g, kRestore)};
  }

  // Stages of a row: K / 256, plus a half stage (one step) when K % 256 == 128.
  NVH_HD static int64_t stage_count(int64_t K) { return (K / kStepK + 1) / 2; }

  // Warps per tile: as few as keep `target_warps` warps busy (K stages permitting).
  static uint32_t split_for(int64_t N, int64_t K, int64_t target_warps) {
    const int64_t tiles = (N + 15) / 16, stages = stage_count(K);
    uint32_t split = 1;
    while (split < kWarps && tiles * split < target_warps && stages >= 2 * split) split *= 2;
    return split;
  }

  // `stages_from_a`: the pipeline depth when A is not pre-paired (the
  // route's kStagesFromA; the bench times others, GemvMmaDepth).
  static nvh::LaunchShape shape(const Params& p, int stages_from_a = kStagesFromA) {
    const int64_t tiles = (p.N + 15) / 16, tiles_per_block = kWarps / p.split;
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>((tiles + tiles_per_block - 1) / tiles_per_block), 1, 1};
    // The pipeline first (split-K parts park their sums in their own
    // stages), then the pre-paired activations.
    const bool fit = activations_fit(p.M, p.K);
    const int64_t prepaired = fit ? prepaired_bytes(p.M, p.K) : 0;
    s.shared_bytes =
        pipeline_bytes(fit ? kPrePairedStages : stages_from_a) + static_cast<uint32_t>(prepaired);
    s.uses_collectives = true;
    return s;
  }

  // One row's share of a step: 32 codes (4 words) and the E4M3 scales of its
  // two 16-value blocks.
  struct RowStep {
    uint32_t words[4];
    uint16_t scales;  // two E4M3 bytes, the lower block first
  };

  // What one lane copies of a stage. The warp copies cooperatively: lane l
  // takes 16-byte chunk l % 8 of rows l / 8, 4 + l / 8, 8 + l / 8 and
  // 12 + l / 8 (so each copy instruction moves four whole 128-byte rows), and
  // with wide scales (wide_scales: each row's scales of a stage 16-byte
  // aligned) the 16 scale bytes of row l, lanes 0 to 15: a copy that skips
  // the L1, where 4-byte copies would allocate lines that evict other data.
  // Otherwise scale bytes 4(l % 4) to 4(l % 4) + 3 of rows l / 4 and
  // 8 + l / 4. Either way one request per row per stage. A row past N copies
  // row N - 1 instead: a row of the mma's A only ever meets its own output,
  // which is not stored, so this costs no test per copy and no zeroing.
  template <bool kWide>
  struct CopyCursor {
    const uint8_t* codes[4];  // the lane's chunk of each of its four rows, next stage
    const uint8_t*
        scales[kWide ? 1 : 2];  // wide: row l's 16 bytes; else the lane's 4 bytes of its two rows
  };

  // Whether a row's scales of a stage are whole, 16-byte aligned chunks:
  // K % 256 == 0 (so no half stage either) and weight_scale 16-byte aligned.
  NVH_HD static bool wide_scales(const Params& p) {
    return p.K % kStageK == 0 && reinterpret_cast<uintptr_t>(p.scales) % 16 == 0;
  }

  // Where chunk c of stage row r sits: rows of 128 bytes, and in odd rows the
  // two halves swapped, so the 8 lanes of a quarter-warp that read rows g and
  // g + 1 (4 chunks each, see row_from_stage) hit all 32 banks once. Rows
  // l / 8 + 4i share a parity, so a lane's four chunks are 512 bytes apart.
  NVH_HD static uint32_t chunk_offset(uint32_t row, uint32_t chunk) {
    return row * kRowBytes + 16 * (chunk ^ (4 * (row & 1)));
  }
  NVH_HD static uint32_t scale_offset(uint32_t row) { return kCodeBytes + row * kScaleRowBytes; }

  template <bool kWide>
  NVH_HD static CopyCursor<kWide> first_copy(const Params& p, int64_t n0, int64_t stage,
                                             uint32_t lane) {
    CopyCursor<kWide> c{};
    const auto row = [&p, n0](int64_t r) { return n0 + r < p.N ? n0 + r : p.N - 1; };
    for (int i = 0; i < 4; ++i) {
      c.codes[i] =
          p.packed + row(4 * i + lane / 8) * (p.K / 2) + stage * kRowBytes + 16 * (lane % 8);
    }
    if constexpr (kWide) {
      c.scales[0] = p.scales + row(lane % 16) * (p.K / 16) + stage * kScaleRowBytes;
    } else {
      for (int j = 0; j < 2; ++j) {
        c.scales[j] =
            p.scales + row(8 * j + lane / 4) * (p.K / 16) + stage * kScaleRowBytes + 4 * (lane % 4);
      }
    }
    return c;
  }

  // Starts copying the cursor's stage into `stage` (only its first step when
  // `half`: the row's last 128 k), then moves the cursor `split` stages on.
  // With wide scales there is no half stage, and the copies are one run of
  // instructions, the scale copy predicated, not branched around.
  template <bool kWide, class Ctx>
  NVH_HD static void issue_stage(Ctx& ctx, const Params& p, CopyCursor<kWide>& c, uint8_t* stage,
                                 bool half, uint32_t lane) {
    if (NVFP4_PROBE(kWide || !half || lane % 8 < 4)) {
      uint8_t* dst = stage + chunk_offset(lane / 8, lane % 8);
      for (int i = 0; i < 4; ++i) ctx.cp_async16(dst + 4 * i * kRowBytes, c.codes[i]);
    }
    if constexpr (kWide) {
      if (NVFP4_PROBE(lane < 16)) ctx.cp_async16(stage + scale_offset(lane), c.scales[0]);
    } else if (NVFP4_PROBE(!half || lane % 4 < 2)) {
      uint8_t* dst = stage + scale_offset(lane / 4) + 4 * (lane % 4);
      for (int j = 0; j < 2; ++j) ctx.cp_async4(dst + 8 * j * kScaleRowBytes, c.scales[j]);
    }
    for (auto& code : c.codes) code += p.split * kRowBytes;
    for (auto& scale : c.scales) scale += p.split * kScaleRowBytes;
  }

  // Lane (g, t)'s share of step w of a stage for one of its rows: chunk
  // 4w + t of the row (codes 32(4w + t) on) and the scales of its two blocks.
  NVH_HD static RowStep row_from_stage(const uint8_t* stage, uint32_t row, int w, int t) {
    const nvh::U32x4 v = nvh::load_generic_u32x4(stage + chunk_offset(row, 4 * w + t));
    // The two scale bytes on their own (no shift to pick them out of a word).
    const uint16_t scales = nvh::load_generic_u16(stage + scale_offset(row) + 8 * w + 2 * t);
    return RowStep{{v.x, v.y, v.z, v.w}, scales};
  }

  // Word q of a row's step (codes 8q..8q+7, all under scale block q / 2) as
  // four weight pairs, codes i and i + 4 in pair i (SpreadDecode), each times
  // its scale with one exact HMUL2 (fast path); the power of two still
  // missing is restored on the fp32 sum (FastScales::restore) rather than
  // here, which would take a second multiply per pair.
  template <nvh::HalfKind kKind>
  NVH_HD static void weight_pairs(const RowStep& r, const uint32_t scales[2], int q,
                                  uint32_t pairs[4]) {
    SpreadDecode<kKind>::pairs(r.words[q], pairs);
    for (int i = 0; i < 4; ++i) pairs[i] = nvh::mul_half2<kKind>(pairs[i], scales[q / 2]);
  }

  // The contract path's word q: the same pairs, each weight the contract's
  // round_to_dtype(e2m1 * scale), scale = fl32(e4m3 * g) of block q / 2.
  // e2m1 comes from SpreadDecode's pair widened to fp32 times 2^kPairExp
  // (exact: a power of two, and every e2m1 * 2^-kPairExp is exact in 16 bits).
  template <nvh::HalfKind kKind>
  NVH_HD static void contract_pairs(const RowStep& r, const float scales[2], int q,
                                    uint32_t pairs[4]) {
    constexpr float kUnbias = kKind == nvh::HalfKind::fp16 ? 0x1p14f : 0x1p126f;
    SpreadDecode<kKind>::pairs(r.words[q], pairs);
    const float scale = scales[q / 2];
    for (int i = 0; i < 4; ++i) {
      const float lo =
          nvh::mul_rn(nvh::half_bits_to_float(static_cast<uint16_t>(pairs[i]), kKind), kUnbias);
      const float hi = nvh::mul_rn(
          nvh::half_bits_to_float(static_cast<uint16_t>(pairs[i] >> 16), kKind), kUnbias);
      pairs[i] = nvh::pack_half2_rn(nvh::mul_rn(lo, scale), nvh::mul_rn(hi, scale), kKind);
    }
  }

  // 8 consecutive activations a0..a7 re-paired as the weights are, (a0, a4),
  // (a1, a5), (a2, a6), (a3, a7).
  NVH_HD static void pair_activations(const nvh::U32x4& v, uint32_t out[4]) {
    out[0] = nvh::byte_perm(v.x, v.z, 0x5410u);
    out[1] = nvh::byte_perm(v.x, v.z, 0x7632u);
    out[2] = nvh::byte_perm(v.y, v.w, 0x5410u);
    out[3] = nvh::byte_perm(v.y, v.w, 0x7632u);
  }

  // Copies A into shared memory as mma_step reads it: in row m (at
  // m * prepaired_row_bytes), step s, the 16 bytes at 256 s + 64 q + 16 t hold
  // activations 128 s + 32 t + 8 q to + 7, paired. The block's threads take
  // consecutive 16-byte chunks of a row (coalesced reads), each thread the
  // same chunk of every row at once, so its M reads wait out one L2 latency
  // together rather than one after another.
  template <class Ctx>
  NVH_HD static void prepair_activations(Ctx& ctx, const Params& p, uint8_t* prepaired) {
    const int chunks_per_row = static_cast<int>(p.K / 8), rows = static_cast<int>(p.M);
    const int64_t row_bytes = prepaired_row_bytes(p.K);
    for (int j = static_cast<int>(ctx.thread_idx().x); NVFP4_PROBE(j < chunks_per_row);
         j += kMaxBlockThreads) {
      nvh::U32x4 v[8];  // M <= 8
      for (int m = 0; m < 8; ++m) {
        if (m < rows) v[m] = nvh::load_u32x4(p.A + m * p.K + 8 * j);
      }
      const int step = j / 16, t = (j / 4) % 4, q = j % 4;
      uint8_t* at = prepaired + 256 * step + 64 * q + 16 * t;
      for (int m = 0; m < 8; ++m) {
        if (m >= rows) break;
        uint32_t pairs[4];
        pair_activations(v[m], pairs);
        nvh::store_u32x4(at + m * row_bytes, {pairs[0], pairs[1], pairs[2], pairs[3]});
      }
    }
  }

  // The activations that meet word q's pairs, from `at`, the lane's first
  // 16 bytes of the step: the pre-paired copy (words 64 bytes apart; the 8
  // lanes of a quarter-warp read two rows, 64 bytes each, one 2K + 64 bytes
  // after the other, so all 32 banks once) or A itself (words 16 bytes
  // apart), re-paired here.
  template <bool kPrePaired>
  NVH_HD static void activation_pairs(const uint8_t* at, int q, uint32_t out[4]) {
    if constexpr (kPrePaired) {
      const nvh::U32x4 v = nvh::load_generic_u32x4(at + 64 * q);
      out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
    } else {
      pair_activations(nvh::load_u32x4(at + 16 * q), out);
    }
  }

  // A row's two block scales of a step as each path uses them: pairs ready
  // for the HMUL2 (fast), or fl32(e4m3 * g) (contract).
  template <nvh::HalfKind kKind, bool kContract>
  struct StepScales {
    uint32_t pairs[2];
    float values[2];
    StepScales() = default;  // for arrays of rows (prefill_fused), assigned before use
    NVH_HD StepScales(uint16_t two_scales, float g) {
      if constexpr (kContract) {
        values[0] = dequant_scale(static_cast<uint8_t>(two_scales), g);
        values[1] = dequant_scale(static_cast<uint8_t>(two_scales >> 8), g);
      } else {
        SpreadDecode<kKind>::scale_pairs(two_scales, kFastFactor<kKind>, pairs);
      }
    }
    NVH_HD void weights(const RowStep& r, int q, uint32_t out[4]) const {
      if constexpr (kContract) {
        contract_pairs<kKind>(r, values, q, out);
      } else {
        weight_pairs<kKind>(r, pairs, q, out);
      }
    }
  };

  // One step: word q of rows n0 + g and n0 + g + 8 feeds mmas 2q and 2q + 1,
  // decoded just before them so few registers hold weights at a time.
  // `act`: this lane's 32 activations of the step (row g of A, or row
  // M - 1 for g >= M, whose B columns feed outputs that are never stored),
  // as activation_pairs reads them. `gs` is weight_scale_2 (contract path).
  template <nvh::HalfKind kKind, bool kPrePaired, bool kContract, class Ctx>
  NVH_HD static void mma_step(Ctx& ctx, const RowStep& lo, const RowStep& hi, const uint8_t* act,
                              float gs, float d[4]) {
    const StepScales<kKind, kContract> scales_lo(lo.scales, gs), scales_hi(hi.scales, gs);
    for (int q = 0; q < 4; ++q) {
      uint32_t w_lo[4], w_hi[4], b_pairs[4];
      scales_lo.weights(lo, q, w_lo);
      scales_hi.weights(hi, q, w_hi);
      activation_pairs<kPrePaired>(act, q, b_pairs);
      for (int h = 0; h < 2; ++h) {
        const uint32_t a[4] = {w_lo[2 * h], w_hi[2 * h], w_lo[2 * h + 1], w_hi[2 * h + 1]};
        const uint32_t b[2] = {b_pairs[2 * h], b_pairs[2 * h + 1]};
        ctx.mma_m16n8k16(d, a, b, d, kKind);
      }
    }
  }

  // What a warp's stage loop needs that stays fixed, and what it moves
  // along: the copy cursor, the next stage to copy and its slot, this lane's
  // activations, the accumulators.
  struct LoopShape {
    uint8_t* warp_stages;
    int part, last, split, half_stage, g, t;
    uint32_t lane;
  };
  template <bool kWide>
  struct LoopState {
    CopyCursor<kWide> copy;
    const uint8_t* act;
    int next, fill;
    float d[4];
  };

  NVH_HD static uint8_t* slot(const LoopShape& s, int i) { return s.warp_stages + i * kStageBytes; }
  template <int kStages>
  NVH_HD static int following(int i) {
    return kStages == 2 ? i ^ 1 : i == kStages - 1 ? 0 : i + 1;
  }

  // The stages of this warp's share of K, each copied in while an earlier
  // one is read, with the weights of the fast path (kContract false) or the
  // contract path (`tensor_scale` = weight_scale_2, used only there). Two
  // copies of the loop, so each path's is straight code.
  template <nvh::HalfKind kKind, bool kPrePaired, bool kWide, bool kContract, int kStages,
            class Ctx>
  NVH_HD NVH_INLINE static void stream(Ctx& ctx, const Params& p, const LoopShape& s,
                                       float tensor_scale, LoopState<kWide>& l) {
    for (int stage = s.part, read = 0; NVFP4_PROBE(stage <= s.last);
         stage += s.split, read = following<kStages>(read)) {
      if (NVFP4_PROBE(l.next <= s.last)) {
        issue_stage(ctx, p, l.copy, slot(s, l.fill), !kWide && l.next == s.half_stage, s.lane);
      }
      ctx.cp_async_commit();
      l.next += s.split;
      l.fill = following<kStages>(l.fill);
      ctx.template cp_async_wait<kStages - 1>();  // this lane's copies of `stage` have landed
      ctx.sync_warp();                            // and so have the other lanes'
      const uint8_t* step_act = l.act;
      for (int w = 0; w < 2; ++w) {
        if (NVFP4_PROBE(!kWide && w == 1 && stage == s.half_stage)) break;
        mma_step<kKind, kPrePaired, kContract>(ctx, row_from_stage(slot(s, read), s.g, w, s.t),
                                               row_from_stage(slot(s, read), s.g + 8, w, s.t),
                                               step_act, tensor_scale, l.d);
        step_act += 2 * kStepK;  // 256 bytes a step, in A and in the pre-paired copy alike
      }
      l.act += p.split * 2 * kStageK;
      ctx.sync_warp();  // every lane is done with this slot before the next issue refills it
    }
  }

  template <nvh::HalfKind kKind, bool kPrePaired, bool kWide, int kStages, class Ctx>
  NVH_HD static void run(Ctx& ctx, const Params& p) {
    const uint32_t tiles_per_block = kWarps / p.split;
    const int64_t tile = int64_t{ctx.block_idx().x} * tiles_per_block + ctx.warp() / p.split;
    const int64_t part = ctx.warp() % p.split;
    const int64_t n0 = tile * 16, steps = p.K / kStepK, stages = stage_count(p.K);
    const uint32_t lane = ctx.lane();
    const int g = static_cast<int>(lane / 4), t = static_cast<int>(lane % 4);
    // This warp's stages; after the loop, where a split-K part parks its sums.
    uint8_t* warp_stages = ctx.template shared_mem<uint8_t>() + ctx.warp() * kStages * kStageBytes;
    uint8_t* prepaired = ctx.template shared_mem<uint8_t>() + pipeline_bytes(kStages);
    float d[4] = {0.f, 0.f, 0.f, 0.f};  // +0: the contract's sums start there
    const bool has_work = n0 < p.N && part < stages;
    // Loop state in 32 bits (K / 256 < 2^31 whenever a row of B, K / 2
    // bytes, fits in memory); stage slots rotate without a division.
    const int last = static_cast<int>(stages) - 1, split = static_cast<int>(p.split);
    const int half_stage =
        !kWide && steps % 2 == 1 ? last : -1;  // a half stage can only be the row's last
    const LoopShape shape{warp_stages, static_cast<int>(part), last, split, half_stage, g, t, lane};
    LoopState<kWide> l{first_copy<kWide>(p, n0, part, lane),
                       nullptr,
                       static_cast<int>(part),
                       0,
                       {0.f, 0.f, 0.f, 0.f}};

    // The first weights are on their way while the block pre-pairs A (when it does).
    for (int s = 0; s < kStages - 1; ++s, l.next += split, l.fill = following<kStages>(l.fill)) {
      if (NVFP4_PROBE(has_work && l.next <= last)) {
        issue_stage(ctx, p, l.copy, slot(shape, l.fill), !kWide && l.next == half_stage, lane);
      }
      ctx.cp_async_commit();  // empty groups too, so the wait count below stays uniform
    }
    if constexpr (kPrePaired) {
      prepair_activations(ctx, p, prepaired);
      ctx.sync_threads();
    }
    if (NVFP4_PROBE(has_work)) {
      // Lanes past M read row M - 1 (the same addresses as its own lanes, so
      // no extra traffic) into outputs that are not stored: no zeroing and no
      // test per load, measured 2-3 % faster on the H200 than skipping them.
      const int64_t act_row = g < p.M ? g : p.M - 1;
      l.act = kPrePaired
                  ? prepaired + act_row * prepaired_row_bytes(p.K) + part * 2 * kStageK + 16 * t
                  : reinterpret_cast<const uint8_t*>(p.A + act_row * p.K + part * kStageK + 32 * t);
      // weight_scale_2, read once per thread (every thread reads the same
      // value, so the path is uniform), here rather than at the start: held
      // through the prologue, it made values spill there (ptxas, sm_90a).
      // Its latency hides behind the first stage's copies.
      const float tensor_scale = nvh::load_generic_f32(p.global_scale);
      if (NVFP4_PROBE(fast_g<kKind>(tensor_scale))) {
        stream<kKind, kPrePaired, kWide, false, kStages>(ctx, p, shape, 0.0f, l);
      } else {
        stream<kKind, kPrePaired, kWide, true, kStages>(ctx, p, shape, tensor_scale, l);
      }
      for (int i = 0; i < 4; ++i) d[i] = l.d[i];
    }

    if (NVFP4_PROBE(p.split > 1)) {
      // The parts meet: each parks its accumulators in its own (drained)
      // stages, part 0 adds them in order.
      ctx.template cp_async_wait<0>();
      float* parked = reinterpret_cast<float*>(warp_stages) + lane * 4;
      for (int i = 0; i < 4; ++i) nvh::store_f32(parked + i, d[i]);
      ctx.sync_threads();
      if (NVFP4_PROBE(part != 0)) return;
      for (uint32_t w = 1; w < p.split; ++w) {
        const float* other =
            reinterpret_cast<const float*>(warp_stages + w * kStages * kStageBytes) + lane * 4;
        for (int i = 0; i < 4; ++i) d[i] = nvh::add_rn(d[i], nvh::load_generic_f32(other + i));
      }
    }
    if (NVFP4_PROBE(n0 >= p.N)) return;

    // The fast path's power of two, from weight_scale_2 read again rather
    // than kept in a register through the loop (1 on the contract path).
    const float g_again = nvh::load_generic_f32(p.global_scale);
    const float restore = fast_g<kKind>(g_again) ? fast_scales<kKind>(g_again).restore : 1.0f;
    for (int i = 0; i < 4; ++i) {
      const int64_t n = n0 + g + (i >= 2 ? 8 : 0), m = 2 * t + (i % 2);
      if (NVFP4_PROBE(n >= p.N || m >= p.M)) continue;
      store_gemv_output<kKind>(p, nvh::mul_rn(d[i], restore), m, n);
    }
  }

  template <nvh::HalfKind kKind, bool kPrePaired, int kStages, class Ctx>
  NVH_HD static void run_scales(Ctx& ctx, const Params& p) {
    if (NVFP4_PROBE(wide_scales(p))) {
      run<kKind, kPrePaired, true, kStages>(ctx, p);
    } else {
      run<kKind, kPrePaired, false, kStages>(ctx, p);
    }
  }

  template <nvh::HalfKind kKind, int kStagesA, class Ctx>
  NVH_HD static void run_kind(Ctx& ctx, const Params& p) {
    if (NVFP4_PROBE(activations_fit(p.M, p.K))) {
      run_scales<kKind, true, kPrePairedStages>(ctx, p);
    } else {
      run_scales<kKind, false, kStagesA>(ctx, p);
    }
  }

  // The kernel with kStagesA stages when A is not pre-paired (launch it
  // with shape(p, kStagesA)); the route runs kStagesFromA.
  template <int kStagesA, class Ctx>
  NVH_HD static void body_at(Ctx& ctx, const Params& p) {
    if (NVFP4_PROBE(p.kind == nvh::HalfKind::fp16)) {
      run_kind<nvh::HalfKind::fp16, kStagesA>(ctx, p);
    } else {
      run_kind<nvh::HalfKind::bf16, kStagesA>(ctx, p);
    }
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    body_at<kStagesFromA>(ctx, p);
  }
};

}  // namespace nvfp4
