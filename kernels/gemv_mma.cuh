// gemv_mma: the tensor-core decode GEMV for 0 < M <= 8, block_size == 16,
// K % 128 == 0 on sm >= 80, with mma.sync m16n8k16.
//
// The weights take the A slot (16 rows of W by 16 k) and the activations the
// B slot (16 k by 8 rows of A, so M <= 8 fits one mma). A block owns one tile
// of 16 rows of W; its warps split K in steps of 128 and meet in shared
// memory at the end, in a fixed order, so the result does not depend on
// timing.
//
// The sum over k does not care which k sits in which fragment slot, as long as
// a weight and its activation sit in matching slots. So each lane loads 32
// consecutive codes of a row (one 16-byte load) and the activations of the
// same 32 k (plain 8-byte loads), rather than the scattered bytes the PTX
// fragment layout would ask for: in mma j of a step, lane (g, t) puts
// physical k = 32t + 4j + {0,1,2,3} where the layout has logical k =
// {2t, 2t+1, 2t+8, 2t+9}, for A and B alike.
//
// The E4M3 scale is folded into each weight (e2m1 * e4m3 has 6 significant
// bits, exact in fp16 and bf16); weight_scale_2 multiplies the sum once, as in
// gemv_scalar.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/fp4_codec.cuh"

namespace nvfp4 {

struct GemvMma {
  static constexpr uint32_t kWarps = 8;
  static constexpr uint32_t kMaxBlockThreads = kWarps * 32;
  static constexpr int64_t kStepK = 128;

  struct Params {
    const uint16_t* A;          // [M, K], 16-byte aligned
    const uint8_t* packed;      // [N, K/2], 16-byte aligned
    const uint8_t* scales;      // [N, K/16] E4M3
    const float* global_scale;  // weight_scale_2
    const uint16_t* bias;       // [N] or null
    uint16_t* Y;                // [M, N]
    int64_t M, N, K;
    nvh::HalfKind kind;
  };

  static nvh::LaunchShape shape(const Params& p) {
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>((p.N + 15) / 16), 1, 1};
    s.shared_bytes = kWarps * 32 * 4 * sizeof(float);
    s.uses_collectives = true;
    return s;
  }

  // 32 weights of row n in one step, as 16 packed half pairs, scale folded in.
  // Rows past N contribute zeros.
  NVH_HD static void load_weight_pairs(const Params& p, int64_t n, int64_t step, int t, uint32_t pairs[16]) {
    if (n >= p.N) {
      for (int i = 0; i < 16; ++i) pairs[i] = 0;
      return;
    }
    const nvh::U32x4 words = nvh::load_u32x4(p.packed + n * (p.K / 2) + step * 64 + t * 16);
    const uint32_t w4[4] = {words.x, words.y, words.z, words.w};
    const uint8_t* scale = p.scales + n * (p.K / 16) + step * 8 + 2 * t;
    for (int q = 0; q < 4; ++q) {  // word q holds codes 8q..8q+7, all under scale block q / 2
      float v[8];
      decode_e2m1x8(w4[q], v);
      const float s = nvh::e4m3_to_float(scale[q / 2]);
      for (int i = 0; i < 4; ++i) {
        pairs[4 * q + i] = nvh::pack_half2_rn(nvh::mul_rn(v[2 * i], s), nvh::mul_rn(v[2 * i + 1], s), p.kind);
      }
    }
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t n0 = int64_t{ctx.block_idx().x} * 16;
    const int g = static_cast<int>(ctx.lane() / 4), t = static_cast<int>(ctx.lane() % 4);
    float d[4] = {0.f, 0.f, 0.f, 0.f};

    for (int64_t step = ctx.warp(); step < p.K / kStepK; step += kWarps) {
      uint32_t row_lo[16], row_hi[16];  // rows n0 + g and n0 + g + 8
      load_weight_pairs(p, n0 + g, step, t, row_lo);
      load_weight_pairs(p, n0 + g + 8, step, t, row_hi);
      const uint16_t* act = p.A + g * p.K + step * kStepK + 32 * t;
      for (int j = 0; j < 8; ++j) {
        const uint32_t a[4] = {row_lo[2 * j], row_hi[2 * j], row_lo[2 * j + 1], row_hi[2 * j + 1]};
        uint32_t b[2] = {0u, 0u};
        if (g < p.M) {
          const nvh::U32x2 v = nvh::load_u32x2(act + 4 * j);
          b[0] = v.x;
          b[1] = v.y;
        }
        ctx.mma_m16n8k16(d, a, b, d, p.kind);
      }
    }

    // Warps meet: each parks its accumulators, warp 0 adds them in warp order.
    float* parked = ctx.template shared_mem<float>();
    for (int i = 0; i < 4; ++i) parked[(ctx.warp() * 32 + ctx.lane()) * 4 + i] = d[i];
    ctx.sync_threads();
    if (ctx.warp() != 0) return;
    const float global_scale = *p.global_scale;
    for (int i = 0; i < 4; ++i) {
      float sum = parked[ctx.lane() * 4 + i];
      for (uint32_t w = 1; w < kWarps; ++w) sum = nvh::add_rn(sum, parked[(w * 32 + ctx.lane()) * 4 + i]);
      const int64_t n = n0 + g + (i >= 2 ? 8 : 0), m = 2 * t + (i % 2);
      if (n >= p.N || m >= p.M) continue;
      float y = nvh::mul_rn(sum, global_scale);
      if (p.bias) y = nvh::add_rn(y, nvh::half_bits_to_float(p.bias[n], p.kind));
      p.Y[m * p.N + n] = nvh::round_to_half_bits(y, p.kind);
    }
  }
};

}  // namespace nvfp4
