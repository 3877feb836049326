// gemv_scalar: the decode GEMV for 0 < M <= 8, block_size == 16, K % 32 == 0.
//
// A warp owns kRows rows of W (output columns; 4, 2 or 1, whichever divides
// N), so every activation it loads serves kRows weights. Lane l takes scale
// blocks l, l + 32, ... of those rows (16 values: 8 packed bytes, one scale),
// accumulates all M rows of A in registers, and the warp sums its lanes with
// a shuffle butterfly.
//
// Why weight_scale_2 comes last, unlike the dequant routes: here a weight is
// e2m1 * e4m3, which is exact in fp32 (2 + 4 significant bits), so no weight
// is rounded; the fp32 tensor scale multiplies the reduced sum once. The
// dequant routes round e2m1 * (e4m3 * weight_scale_2) per weight, as the
// contract requires of the scratch. The two agree bit for bit when
// weight_scale_2 is a power of two and the sums are exact (the exact mode).
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/fp4_codec.cuh"
#include "kernels/gemv_output.cuh"
#include "kernels/probes.h"

namespace nvfp4 {

struct GemvScalar {
  static constexpr uint32_t kWarpsPerBlock = 4;
  static constexpr int kMaxM = 8;

  using Params = GemvOperands;

  static nvh::LaunchShape shape(const Params& p, int rows_per_warp) {
    const int64_t warps = (p.N + rows_per_warp - 1) / rows_per_warp;
    nvh::LaunchShape s;
    s.block = {kWarpsPerBlock * 32, 1, 1};
    s.grid = {static_cast<uint32_t>((warps + kWarpsPerBlock - 1) / kWarpsPerBlock), 1, 1};
    s.uses_collectives = true;
    return s;
  }
};

template <int kRows>
struct GemvScalarRows {
  using Params = GemvScalar::Params;
  static constexpr uint32_t kMaxBlockThreads = GemvScalar::kWarpsPerBlock * 32;

  // Eight weights of row n from its scale block b: e2m1 * e4m3, exact.
  NVH_HD static void load_weights(const Params& p, int64_t n, int64_t b, int part, float w[8]) {
    decode_e2m1x8(nvh::load_u32(p.packed + n * (p.K / 2) + b * 8 + part * 4), w);
    const float scale = nvh::e4m3_to_float(nvh::load_u8(p.scales + n * (p.K / 16) + b));
    for (int j = 0; j < 8; ++j) w[j] = nvh::mul_rn(w[j], scale);
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

  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void run(Ctx& ctx, const Params& p) {
    const int64_t warp = int64_t{ctx.block_idx().x} * GemvScalar::kWarpsPerBlock + ctx.warp();
    const int64_t n0 = warp * kRows;
    if (NVFP4_PROBE(n0 >= p.N)) return;  // the whole warp leaves together
    const int64_t lane = ctx.lane();

    float acc[GemvScalar::kMaxM][kRows] = {};
    for (int64_t b = lane; NVFP4_PROBE(b < p.K / 16); b += 32) {
      for (int part = 0; part < 2; ++part) {
        float w[kRows][8];
        for (int r = 0; r < kRows; ++r) load_weights(p, n0 + r, b, part, w[r]);
        for (int m = 0; m < GemvScalar::kMaxM; ++m) {
          if (NVFP4_PROBE(m >= p.M)) break;
          float a[8];
          load_activations<kKind>(p, m, b * 16 + part * 8, a);
          for (int r = 0; r < kRows; ++r) {
            for (int j = 0; j < 8; ++j) acc[m][r] = nvh::fma_rn(a[j], w[r][j], acc[m][r]);
          }
        }
      }
    }

    const float global_scale = *p.global_scale;
    for (int m = 0; m < GemvScalar::kMaxM; ++m) {
      if (NVFP4_PROBE(m >= p.M)) break;
      for (int r = 0; r < kRows; ++r) {
        const float sum = warp_sum(ctx, acc[m][r]);
        if (NVFP4_PROBE(lane != 0)) continue;
        store_gemv_output<kKind>(p, sum, global_scale, m, n0 + r);
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
