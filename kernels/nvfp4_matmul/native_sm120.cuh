// native_sm120, the activation half: A [M, K] fp16/bf16 -> NVFP4 (packed
// E2M1 codes, one E4M3 scale per 16 values, an fp32 tensor scale), bit for
// bit what ref::quantize_nvfp4 gives for A widened to float
// (reference/nvfp4_matmul/quantize.h):
//   g    = amax / (6 * 448)            (1 for amax == 0, 2^-149 if that underflows)
//   s    = e4m3(block_amax / (6 * g))  (RNE, saturating at 448)
//   code = e2m1(x / (float(s) * g))    (signed zero where float(s) * g == 0)
// every operation one fp32 rounding, in that order.
//
// Three launches, because the tensor scale needs the whole tensor's amax
// before any block can be quantized:
//   ActAmaxPartial  each block's max |x|      -> partial[block]
//   ActGlobalScale  max of the partials       -> g
//   ActQuantize     one thread per 16 values  -> 8 code bytes + 1 scale byte
// Max is exact and order-free, so the result does not depend on the grid,
// the timing or the backend; no atomics are needed.
//
// ActQuantize writes each scale byte straight into its final place, either
// row-major [M, K/16] (what the reference returns) or the cuBLASLt 128x4
// tiled layout (scale_layout.h): the offset is a few integer operations, so a
// separate swizzle pass over the scales would only add a launch and a round
// trip through memory. The tiled padding is not written here: the launcher
// zero-fills the buffer first. ScaleRetile re-tiles the weights' row-major
// weight_scale, which arrives from the caller.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/fp4_codec.cuh"
#include "kernels/nvfp4_matmul/probes.h"
#include "kernels/nvfp4_matmul/scale_layout.h"

namespace nvfp4 {

inline constexpr int64_t kActBlock = 16;  // values per E4M3 scale (cuBLASLt's VEC16)

// a / b rounded once. __fdiv_rn keeps the division IEEE whatever -prec-div or
// fast-math flags a build sets.
NVH_HD NVH_INLINE float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

NVH_HD NVH_INLINE float abs_bits(float x) {
  return nvh::bits_to_float(nvh::float_to_bits(x) & 0x7FFFFFFFu);
}

// Running max of |x|. A NaN x leaves the max as it was (the comparison is
// false) the same way on both sides; the reference rejects non-finite input.
NVH_HD NVH_INLINE float fold_abs_max(float m, float x) {
  const float a = abs_bits(x);
  return a > m ? a : m;
}

// The reference's global_scale_for_amax.
NVH_HD NVH_INLINE float act_global_scale(float amax) {
  if (NVFP4_PROBE(amax == 0.0f)) return 1.0f;
  const float g = div_rn(amax, 6.0f * 448.0f);                // 2688 is exact
  return NVFP4_PROBE(g > 0.0f) ? g : nvh::bits_to_float(1u);  // 2^-149: keeps 6 * g > 0
}

// Round to the E2M1 grid {0, .5, 1, 1.5, 2, 3, 4, 6}, ties to the even code,
// saturating at 6, sign kept (also on zero). Written as the seven rounding
// thresholds rather than the toolkit's __nv_cvt_float_to_fp4, because that
// becomes a hardware cvt on sm_100a/120a and a software path elsewhere; this
// is the same instructions everywhere. Ties, as values: .25 -> 0, .75 -> 1, 1.25 -> 1,
// 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4 (each to its even code).
NVH_HD NVH_INLINE uint8_t encode_e2m1(float v) {
  const uint32_t bits = nvh::float_to_bits(v);
  const float a = abs_bits(v);
  const uint32_t code = NVFP4_PROBE(a <= 0.25f)   ? 0u
                        : NVFP4_PROBE(a < 0.75f)  ? 1u
                        : NVFP4_PROBE(a <= 1.25f) ? 2u
                        : NVFP4_PROBE(a < 1.75f)  ? 3u
                        : NVFP4_PROBE(a <= 2.5f)  ? 4u
                        : NVFP4_PROBE(a < 3.5f)   ? 5u
                        : NVFP4_PROBE(a <= 5.0f)  ? 6u
                                                  : 7u;  // > 5, inf (and NaN, as the toolkit does)
  return static_cast<uint8_t>(code | ((bits >> 28) & 0x8u));
}

// The reference's block_scale_for_amax: the toolkit's RNE, saturating E4M3
// conversion (its host path is cross-checked against the reference in
// reference/nvfp4_matmul/toolkit_crosscheck; the device's is a cvt instruction on sm_89+).
NVH_HD NVH_INLINE uint8_t act_block_scale(float block_amax, float g) {
  const float ratio = div_rn(block_amax, nvh::mul_rn(6.0f, g));
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(ratio, __NV_SATFINITE, __NV_E4M3));
}

// The reference's encode_element: a vanishing scale product gives signed zeros.
NVH_HD NVH_INLINE uint8_t act_code(float x, float scale_product) {
  if (NVFP4_PROBE(scale_product == 0.0f))
    return static_cast<uint8_t>((nvh::float_to_bits(x) >> 28) & 0x8u);
  return encode_e2m1(div_rn(x, scale_product));
}

// A grid-stride launch over `total` items: `threads` per block, 1 to `cap` blocks.
inline nvh::LaunchShape grid_stride_shape(int64_t total, uint32_t threads, int64_t cap) {
  const int64_t blocks = (total + threads - 1) / threads;
  nvh::LaunchShape s;
  s.block = {threads, 1, 1};
  s.grid = {static_cast<uint32_t>(blocks < 1 ? 1 : blocks < cap ? blocks : cap), 1, 1};
  return s;
}

// Max over a warp; every lane gets it. Values are >= 0, so max is exact.
template <class Ctx>
NVH_HD float warp_max(Ctx& ctx, float m) {
  for (int mask = 16; mask > 0; mask >>= 1) {
    const float other = ctx.shfl_xor(m, mask);
    m = other > m ? other : m;
  }
  return m;
}

struct ActAmaxPartial {
  static constexpr uint32_t kMaxBlockThreads = 256;
  static constexpr int64_t kMaxBlocks = 1024;  // partial[] never needs more floats than this

  struct Params {
    const uint16_t* A;  // count fp16/bf16 values
    int64_t count;
    nvh::HalfKind kind;
    float* partial;  // [grid size]
  };

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t stride = int64_t{ctx.grid_dim().x} * ctx.block_dim().x;
    float m = 0.0f;
    for (int64_t i = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x;
         NVFP4_PROBE(i < p.count); i += stride) {
      m = fold_abs_max(m, nvh::half_bits_to_float(nvh::load_generic_u16(p.A + i), p.kind));
    }
    // Warp maxima through shared memory, then thread 0 folds them.
    m = warp_max(ctx, m);
    float* per_warp = ctx.template shared_mem<float>();
    if (NVFP4_PROBE(ctx.lane() == 0)) nvh::store_f32(per_warp + ctx.warp(), m);
    ctx.sync_threads();
    if (NVFP4_PROBE(ctx.thread_idx().x == 0)) {
      float all = 0.0f;
      for (uint32_t w = 0; w < ctx.block_dim().x / 32; ++w) {
        const float of_warp = nvh::load_generic_f32(per_warp + w);
        all = of_warp > all ? of_warp : all;
      }
      nvh::store_f32(p.partial + ctx.block_idx().x, all);
    }
  }

  // Always at least one block, so an empty A still yields amax 0 (and g = 1).
  static nvh::LaunchShape shape(const Params& p) {
    nvh::LaunchShape s = grid_stride_shape(p.count, kMaxBlockThreads, kMaxBlocks);
    s.shared_bytes = kMaxBlockThreads / 32 * sizeof(float);
    s.uses_collectives = true;
    return s;
  }
};

// One warp folds the partials and writes the tensor scale.
struct ActGlobalScale {
  static constexpr uint32_t kMaxBlockThreads = 32;

  struct Params {
    const float* partial;
    int64_t count;
    float* global_scale;  // one float
  };

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    float m = 0.0f;
    for (int64_t i = ctx.lane(); NVFP4_PROBE(i < p.count); i += 32) {
      const float partial = nvh::load_generic_f32(p.partial + i);
      m = partial > m ? partial : m;
    }
    m = warp_max(ctx, m);
    if (NVFP4_PROBE(ctx.lane() == 0)) nvh::store_f32(p.global_scale, act_global_scale(m));
  }

  static nvh::LaunchShape shape(const Params&) {
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.uses_collectives = true;
    return s;
  }
};

struct ActQuantize {
  static constexpr uint32_t kMaxBlockThreads = 256;
  static constexpr int64_t kMaxBlocks =
      4096;  // past kMaxBlocks * kMaxBlockThreads blocks of 16 a thread loops

  struct Params {
    const uint16_t* A;  // [M, K], K % 16 == 0
    int64_t M, K;
    nvh::HalfKind kind;
    const float* global_scale;  // from ActGlobalScale
    uint8_t* packed;            // [M, K/2], low nibble = even k
    uint8_t* scales;            // [M, K/16] row-major, or tiled (padding pre-zeroed)
    bool tiled_scales;
  };

  // One block of 16 values: its scale byte, and its 8 code bytes into `out`.
  NVH_HD static uint8_t quantize_block(const uint16_t* x, nvh::HalfKind kind, float g,
                                       uint8_t* out) {
    float v[kActBlock];
    float amax = 0.0f;
    for (int j = 0; j < kActBlock; ++j) {
      v[j] = nvh::half_bits_to_float(nvh::load_generic_u16(x + j), kind);
      amax = fold_abs_max(amax, v[j]);
    }
    const uint8_t scale = act_block_scale(amax, g);
    const float product = dequant_scale(scale, g);  // float(s) * g, the dequant contract's order
    for (int j = 0; j < kActBlock / 2; ++j) {
      nvh::store_u8(out + j, static_cast<uint8_t>(act_code(v[2 * j], product) |
                                                  (act_code(v[2 * j + 1], product) << 4)));
    }
    return scale;
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t blocks_per_row = p.K / kActBlock;
    const int64_t total = p.M * blocks_per_row;
    const int64_t stride = int64_t{ctx.grid_dim().x} * ctx.block_dim().x;
    const float g = nvh::load_generic_f32(p.global_scale);
    for (int64_t i = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x;
         NVFP4_PROBE(i < total); i += stride) {
      const int64_t row = i / blocks_per_row, b = i - row * blocks_per_row;
      const uint8_t scale = quantize_block(p.A + row * p.K + b * kActBlock, p.kind, g,
                                           p.packed + row * (p.K / 2) + b * (kActBlock / 2));
      nvh::store_u8(
          p.scales + (NVFP4_PROBE(p.tiled_scales) ? tiled_scale_offset(row, b, blocks_per_row) : i),
          scale);
    }
  }

  static nvh::LaunchShape shape(const Params& p) {
    return grid_stride_shape(p.M * (p.K / kActBlock), kMaxBlockThreads, kMaxBlocks);
  }
};

// Row-major [rows, cols] scales -> the tiled layout, one thread per tiled
// byte, so the padding is written (zero) too.
struct ScaleRetile {
  static constexpr uint32_t kMaxBlockThreads = 256;
  static constexpr int64_t kMaxBlocks =
      4096;  // past kMaxBlocks * kMaxBlockThreads tiled bytes a thread loops

  struct Params {
    const uint8_t* row_major;
    int64_t rows, cols;
    uint8_t* tiled;  // tiled_scale_bytes(rows, cols)
  };

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t total = tiled_scale_bytes(p.rows, p.cols);
    const int64_t stride = int64_t{ctx.grid_dim().x} * ctx.block_dim().x;
    for (int64_t o = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x;
         NVFP4_PROBE(o < total); o += stride) {
      int64_t r = 0, c = 0;
      tiled_scale_coords(o, p.cols, &r, &c);
      // The byte before the address, as `tiled[o] = ...` orders them (C++17),
      // so the device code is the assignment's instruction for instruction.
      const uint8_t byte = NVFP4_PROBE(r < p.rows && c < p.cols)
                               ? nvh::load_generic_u8(p.row_major + r * p.cols + c)
                               : uint8_t{0};
      nvh::store_u8(p.tiled + o, byte);
    }
  }

  static nvh::LaunchShape shape(const Params& p) {
    return grid_stride_shape(tiled_scale_bytes(p.rows, p.cols), kMaxBlockThreads, kMaxBlocks);
  }
};

}  // namespace nvfp4
