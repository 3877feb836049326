// prefill_scalar: the general dequantizer, for every shape prefill_vec8 does
// not take (odd block_size, K % 8 != 0, unaligned pointers).
//
// One packed byte per thread over a 64-bit linear index: the row and the byte
// within it come from a division, each nibble finds its own scale block (an
// odd block_size can split a byte between two scales), and an odd K leaves the
// last byte's high nibble as padding that is never written.
#pragma once

#include <cuda_fp4.h>

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/fp4_codec.cuh"

namespace nvfp4 {

struct PrefillScalar {
  static constexpr uint32_t kMaxBlockThreads = 256;

  struct Params {
    const uint8_t* packed;      // [N, row_bytes]
    const uint8_t* scales;      // [N, scale_cols] E4M3
    const float* global_scale;  // weight_scale_2
    uint16_t* scratch;          // [N, K]
    int64_t N, K, block_size, scale_cols, row_bytes;
    nvh::HalfKind kind;
  };

  // Both E2M1 values of a packed byte, low nibble (even k) first, through the
  // toolkit's own conversion.
  NVH_HD static void decode_byte(uint8_t byte, float* low, float* high) {
    const __half2_raw pair = __nv_cvt_fp4x2_to_halfraw2(byte, __NV_E2M1);
    *low = nvh::half_bits_to_float(pair.x, nvh::HalfKind::fp16);
    *high = nvh::half_bits_to_float(pair.y, nvh::HalfKind::fp16);
  }

  NVH_HD static uint16_t dequant_one(float value, const Params& p, int64_t row, int64_t k) {
    const float scale = dequant_scale(p.scales[row * p.scale_cols + k / p.block_size], *p.global_scale);
    return nvh::round_to_half_bits(nvh::mul_rn(value, scale), p.kind);
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t total = p.N * p.row_bytes;
    const int64_t stride = int64_t{ctx.grid_dim().x} * ctx.block_dim().x;
    for (int64_t i = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x; i < total;
         i += stride) {
      const int64_t row = i / p.row_bytes;
      const int64_t k = (i - row * p.row_bytes) * 2;
      float low, high;
      decode_byte(p.packed[i], &low, &high);
      uint16_t* out = p.scratch + row * p.K + k;
      out[0] = dequant_one(low, p, row, k);
      if (k + 1 < p.K) out[1] = dequant_one(high, p, row, k + 1);
    }
  }

  static nvh::LaunchShape shape(const Params& p, int multiprocessors) {
    const int64_t total = p.N * p.row_bytes;
    const int64_t blocks_needed = (total + kMaxBlockThreads - 1) / kMaxBlockThreads;
    // Enough blocks to fill the device several times over; the loop covers the rest.
    const int64_t cap = int64_t{multiprocessors > 0 ? multiprocessors : 8} * 32;
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>(blocks_needed < cap ? blocks_needed : cap), 1, 1};
    return s;
  }
};

}  // namespace nvfp4
