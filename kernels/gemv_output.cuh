// What the two decode GEMVs (gemv_scalar.cuh, gemv_mma.cuh) share: the
// operands they read and write, and how a reduced sum becomes an output.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/probes.h"

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

// Y[m, n] from the sum of a row's e2m1 * e4m3 * activation products: the
// fp32 tensor scale once, then the bias, then one rounding.
template <nvh::HalfKind kKind>
NVH_HD NVH_INLINE void store_gemv_output(const GemvOperands& p, float sum, float global_scale, int64_t m,
                                         int64_t n) {
  float y = nvh::mul_rn(sum, global_scale);
  if (NVFP4_PROBE(p.bias))
    y = nvh::add_rn(y, nvh::half_bits_to_float(nvh::load_generic_u16(p.bias + n), kKind));
  nvh::store_u16(p.Y + m * p.N + n, nvh::round_to_half_bits(y, kKind));
}

}  // namespace nvfp4
