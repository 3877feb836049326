// What the two decode GEMVs (gemv_scalar.cuh, gemv_mma.cuh) share: the
// operands they read and write, the test that picks a fast path by
// weight_scale_2, and how a reduced sum becomes an output.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/probes.h"

namespace nvfp4 {

struct GemvOperands {
  const uint16_t* A;          // [M, K], 16-byte aligned (dispatch.cc)
  const uint8_t* packed;      // [N, K/2], 16-byte aligned
  const uint8_t* scales;      // [N, K/16] E4M3, 4-byte aligned
  const float* global_scale;  // weight_scale_2
  const uint16_t* bias;       // [N] or null
  uint16_t* Y;                // [M, N]
  int64_t M, N, K;
  nvh::HalfKind kind;
};

// Whether g is 2^e for an e in [lo, hi] (lo >= -126: normal numbers only),
// from its bits: mantissa zero and sign plus exponent in range, so a
// negative g, a subnormal, zero, infinity or NaN is never in. A few integer
// operations, once per thread.
NVH_HD NVH_INLINE bool is_power_of_two_in(float g, int lo, int hi) {
  const uint32_t bits = nvh::float_to_bits(g);
  const uint32_t lo_bits = static_cast<uint32_t>(lo + 127) << 23,
                 hi_bits = static_cast<uint32_t>(hi + 127) << 23;
  return (bits & 0x007FFFFFu) == 0 && bits - lo_bits <= hi_bits - lo_bits;
}

// The bias of output column n, widened to fp32 (exactly).
template <nvh::HalfKind kKind>
NVH_HD NVH_INLINE float load_bias(const GemvOperands& p, int64_t n) {
  return nvh::half_bits_to_float(nvh::load_generic_u16(p.bias + n), kKind);
}

// Y[m, n] from a row's fp32 sum of activation * weight products, the
// weights already the contract's (weight_scale_2 included): the bias, then
// one rounding (DESIGN.md, "Special values").
template <nvh::HalfKind kKind>
NVH_HD NVH_INLINE void store_gemv_output(const GemvOperands& p, float sum, int64_t m, int64_t n) {
  float y = sum;
  if (NVFP4_PROBE(p.bias)) y = nvh::add_rn(y, load_bias<kKind>(p, n));
  nvh::store_u16(p.Y + m * p.N + n, nvh::round_to_half_bits(y, kKind));
}

// The same with column n's bias already loaded (`bias`, used only where
// p.bias is set): for a caller that loads its bias before its stores.
template <nvh::HalfKind kKind>
NVH_HD NVH_INLINE void store_gemv_output_biased(const GemvOperands& p, float sum, float bias,
                                                int64_t m, int64_t n) {
  float y = sum;
  if (NVFP4_PROBE(p.bias)) y = nvh::add_rn(y, bias);
  nvh::store_u16(p.Y + m * p.N + n, nvh::round_to_half_bits(y, kKind));
}

}  // namespace nvfp4
