// gemv_scalar: the decode GEMV for 0 < M <= 8, block_size == 16, K % 32 == 0.
//
// A warp owns kRows rows of W (output columns; 4, 2 or 1, whichever divides
// N), so every activation it loads serves kRows weights. Lane l takes scale
// blocks l, l + 32, ... of those rows (16 values: 8 packed bytes, one scale),
// accumulates all M rows of A in registers, and the warp sums its lanes with
// a shuffle butterfly.
//
// The weights are the contract's, round_to_dtype(e2m1 * fl32(e4m3 * g)) with
// g = weight_scale_2 (DESIGN.md, "Special values"): each block's scale
// fl32(e4m3 * g) is formed once (one FMUL per 16 weights), then each weight
// e2m1 * scale in fp32. When g is a positive power of two in the dtype's
// fast window (kFastMinExp..kFastMaxExp) every such product is already a
// value of the dtype, so rounding it would change nothing and the fast path
// skips it; for any other g (not a power of two, zero, negative, subnormal,
// huge, infinite, NaN) the contract path rounds each weight to the dtype and
// back. g is read once per thread, and every thread reads the same g, so the
// branch between the two is uniform. gemv_contract_test.cc checks the window
// exhaustively (every E4M3 byte, every E2M1 code, every g in it, and that one
// step past either end a weight differs).
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/fp4_codec.cuh"
#include "kernels/nvfp4_matmul/gemv_output.cuh"
#include "kernels/nvfp4_matmul/probes.h"

namespace nvfp4 {

struct GemvScalar {
  static constexpr uint32_t kWarpsPerBlock = 4;
  static constexpr int kMaxM = 8;

  using Params = GemvOperands;

  // The fast window g = 2^e, kFastMinExp <= e <= kFastMaxExp, where every
  // finite e2m1 * e4m3 * g is a value of the dtype. |e2m1 * e4m3| <= 6 * 448
  // = 2688 and its lowest set bit is at least 2^-10 (0.5 times the smallest
  // E4M3 subnormal, 2^-9), with at most 6 significant bits. fp16: 2688 * 2^e
  // <= 65504 needs e <= 4, 2^(e-10) >= 2^-24 (fp16's smallest subnormal)
  // needs e >= -14. bf16: 2^(e-10) >= 2^-133 needs e >= -123; above, no limit
  // below fp32's: a value of at most 6 significant bits below 2^128 is a bf16
  // value, and one at or above 2^128 is inf in fp32 as in bf16 (and the NaN
  // of 0 * inf is NaN in both).
  template <nvh::HalfKind kKind>
  static constexpr int kFastMinExp = kKind == nvh::HalfKind::fp16 ? -14 : -123;
  template <nvh::HalfKind kKind>
  static constexpr int kFastMaxExp = kKind == nvh::HalfKind::fp16 ? 4 : 127;

  template <nvh::HalfKind kKind>
  NVH_HD static bool fast_g(float g) {
    return is_power_of_two_in(g, kFastMinExp<kKind>, kFastMaxExp<kKind>);
  }

  static nvh::LaunchShape shape(const Params& p, int rows_per_warp) {
    const int64_t warps = (p.N + rows_per_warp - 1) / rows_per_warp;
    nvh::LaunchShape s;
    s.block = {kWarpsPerBlock * 32, 1, 1};
    s.grid = {static_cast<uint32_t>((warps + kWarpsPerBlock - 1) / kWarpsPerBlock), 1, 1};
    s.uses_collectives = true;
    return s;
  }
};

// kMaxM: the largest M this instantiation serves (1, 2, 4 or 8). The
// accumulators are sized by it, so small M leaves registers for more warps
// per multiprocessor; the loop still stops at p.M.
template <int kRows, int kMaxM>
struct GemvScalarRows {
  static_assert(kMaxM >= 1 && kMaxM <= GemvScalar::kMaxM, "kMaxM within the route's M");
  using Params = GemvScalar::Params;
  static constexpr uint32_t kMaxBlockThreads = GemvScalar::kWarpsPerBlock * 32;
  // Blocks per multiprocessor by kMaxM (1, 2, 4, 8 -> 7, 6, 5, 4): the
  // register caps (72, 80, 96, 128) that rows-4 instantiations fit without
  // spilling (ptxas -v); the smaller M, the more warps keep loads in flight.
  static constexpr int kMinBlocksPerSM = kMaxM == 1 ? 7 : kMaxM == 2 ? 6 : kMaxM == 4 ? 5 : 4;

  // A lane's raw share of one scale block of each of its warp's rows: two
  // words of 8 codes and the E4M3 scale byte, as loaded, not yet decoded.
  struct RawBlock {
    uint32_t codes[kRows][2];
    uint8_t scale[kRows];
  };

  NVH_HD static RawBlock load_raw(const Params& p, int64_t n0, int64_t b) {
    RawBlock raw;
    for (int r = 0; r < kRows; ++r) {
      const uint8_t* codes = p.packed + (n0 + r) * (p.K / 2) + b * 8;
      raw.codes[r][0] = nvh::load_u32(codes);
      raw.codes[r][1] = nvh::load_u32(codes + 4);
      raw.scale[r] = nvh::load_u8(p.scales + (n0 + r) * (p.K / 16) + b);
    }
    return raw;
  }

  // Eight weights from a word of 8 codes and their block's scale
  // fl32(e4m3 * g): e2m1 * scale in fp32, then (contract path) rounded to
  // the dtype, two at a time, and widened back, exactly.
  template <nvh::HalfKind kKind, bool kContract>
  NVH_HD static void decode_weights(uint32_t codes, float scale, float w[8]) {
    decode_e2m1x8(codes, w);
    for (int j = 0; j < 8; ++j) w[j] = nvh::mul_rn(w[j], scale);
    if constexpr (kContract) {
      for (int j = 0; j < 8; j += 2) {
        const uint32_t pair = nvh::pack_half2_rn(w[j], w[j + 1], kKind);
        w[j] = nvh::half_bits_to_float(static_cast<uint16_t>(pair), kKind);
        w[j + 1] = nvh::half_bits_to_float(static_cast<uint16_t>(pair >> 16), kKind);
      }
    }
  }

  // Eight activations of row m starting at k, widened to fp32 (exact).
  template <nvh::HalfKind kKind>
  NVH_HD static void load_activations(const Params& p, int64_t m, int64_t k, float a[8]) {
    const nvh::U32x4 v = nvh::load_u32x4(p.A + m * p.K + k);
    const uint32_t words[4] = {v.x, v.y, v.z, v.w};
    for (int i = 0; i < 4; ++i) {
      a[2 * i] = nvh::half_bits_to_float(static_cast<uint16_t>(words[i]), kKind);
      a[2 * i + 1] = nvh::half_bits_to_float(static_cast<uint16_t>(words[i] >> 16), kKind);
    }
  }

  template <class Ctx>
  NVH_HD static float warp_sum(Ctx& ctx, float v) {
    for (int mask = 16; mask >= 1; mask /= 2) v = nvh::add_rn(v, ctx.shfl_xor(v, mask));
    return v;
  }

  // One scale block into the accumulators. Each accumulator takes its eight
  // products of a half block in order j = 0..7, so which of the two loop
  // orders below runs changes no rounding; it only decides what stays in
  // registers: the weights of every row (kRows x 8 floats) or the
  // activations of every row of A (kMaxM x 8), whichever is fewer.
  template <nvh::HalfKind kKind, bool kContract>
  NVH_HD static void accumulate_block(const Params& p, const RawBlock& raw, int64_t b, float g,
                                      float (&acc)[kMaxM][kRows]) {
    float scale[kRows];  // each row's block scale fl32(e4m3 * g), formed once for both halves
    for (int r = 0; r < kRows; ++r) scale[r] = dequant_scale(raw.scale[r], g);
      // Unrolled on the GPU: `part` indexes the raw block's registers, which a
      // rolled loop would put in local memory.
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int part = 0; part < 2; ++part) {
      const int64_t k = b * 16 + part * 8;
      if constexpr (kMaxM < kRows) {
        // kMaxM is 1 or 2 here and the launcher gives each its own M, so
        // the bound never stops these loops early; it is kept as the guard
        // against reading past A (no probe: it has no other outcome to reach).
        // Zeroed on the host only: there, with the memory checks inlined
        // into the loads, g++ -O3 no longer sees that the second loop reads
        // only rows the first one loaded, and warns; on the GPU zeroing
        // would add instructions to the hot loop.
#if defined(__CUDA_ARCH__)
        float a[kMaxM][8];
#else
        float a[kMaxM][8] = {};
#endif
        for (int m = 0; m < kMaxM; ++m) {
          if (m >= p.M) break;
          load_activations<kKind>(p, m, k, a[m]);
        }
        for (int r = 0; r < kRows; ++r) {
          float w[8];
          decode_weights<kKind, kContract>(raw.codes[r][part], scale[r], w);
          for (int m = 0; m < kMaxM; ++m) {
            if (m >= p.M) break;
            for (int j = 0; j < 8; ++j) acc[m][r] = nvh::fma_rn(a[m][j], w[j], acc[m][r]);
          }
        }
      } else {
        float w[kRows][8];
        for (int r = 0; r < kRows; ++r)
          decode_weights<kKind, kContract>(raw.codes[r][part], scale[r], w[r]);
        for (int m = 0; m < kMaxM; ++m) {
          if (NVFP4_PROBE(m >= p.M)) break;
          float a[8];
          load_activations<kKind>(p, m, k, a);
          for (int r = 0; r < kRows; ++r) {
            for (int j = 0; j < 8; ++j) acc[m][r] = nvh::fma_rn(a[j], w[r][j], acc[m][r]);
          }
        }
      }
    }
  }

  // Lane l's scale blocks l, l + 32, ... of its warp's rows into `acc`; the
  // next block's loads are issued before this one is decoded, so a warp has
  // memory in flight while it computes. `next` holds the first block's loads.
  template <nvh::HalfKind kKind, bool kContract>
  NVH_HD static void accumulate_row(const Params& p, int64_t n0, int64_t lane, float g,
                                    RawBlock next, float (&acc)[kMaxM][kRows]) {
    const int64_t blocks = p.K / 16;
    for (int64_t b = lane; NVFP4_PROBE(b < blocks); b += 32) {
      const RawBlock raw = next;
      if (NVFP4_PROBE(b + 32 < blocks)) next = load_raw(p, n0, b + 32);
      accumulate_block<kKind, kContract>(p, raw, b, g, acc);
    }
  }

  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void run(Ctx& ctx, const Params& p) {
    const int64_t warp = int64_t{ctx.block_idx().x} * GemvScalar::kWarpsPerBlock + ctx.warp();
    const int64_t n0 = warp * kRows;
    if (NVFP4_PROBE(n0 >= p.N)) return;  // the whole warp leaves together
    const int64_t lane = ctx.lane(), blocks = p.K / 16;
    const float g = nvh::load_generic_f32(
        p.global_scale);  // every thread reads the same g: the path below is uniform

    float acc[kMaxM][kRows] = {};
    // Lanes past the row's last block (K < 512) load nothing.
    RawBlock next{};
    if (NVFP4_PROBE(lane < blocks)) next = load_raw(p, n0, lane);
    if (NVFP4_PROBE(GemvScalar::fast_g<kKind>(g))) {
      accumulate_row<kKind, false>(p, n0, lane, g, next, acc);
    } else {
      accumulate_row<kKind, true>(p, n0, lane, g, next, acc);
    }

    // The bias of the warp's rows before the first store (a store to Y may
    // alias it: loaded per output, each load waited on the store before).
    float bias[kRows] = {};
    if (NVFP4_PROBE(p.bias)) {
      for (int r = 0; r < kRows; ++r) bias[r] = load_bias<kKind>(p, n0 + r);
    }
    for (int m = 0; m < kMaxM; ++m) {
      if (NVFP4_PROBE(m >= p.M)) break;
      for (int r = 0; r < kRows; ++r) {
        const float sum = warp_sum(ctx, acc[m][r]);
        if (NVFP4_PROBE(lane != 0)) continue;
        store_gemv_output_biased<kKind>(p, sum, bias[r], m, n0 + r);
      }
    }
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    if (NVFP4_PROBE(p.kind == nvh::HalfKind::fp16)) {
      run<nvh::HalfKind::fp16>(ctx, p);
    } else {
      run<nvh::HalfKind::bf16>(ctx, p);
    }
  }
};

}  // namespace nvfp4
