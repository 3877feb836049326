// NVFP4 decoding shared by the routes, __host__ __device__ so the host
// executor runs the very same code.
#pragma once

#include <cstdint>

#include "harness/portable_math.h"

namespace nvfp4 {

// Eight E2M1 codes (one 32-bit word of packed B, low nibble first) to floats,
// branch-free. Each code's magnitude (3 bits) indexes two 8-entry byte tables
// with one prmt each: the float's top byte and its second byte (the low 16
// bits of every E2M1 value's float are zero). The sign is bit 3 of the code.
NVH_HD NVH_INLINE void decode_e2m1x8(uint32_t packed, float out[8]) {
  // Magnitudes 0..7 = 0, 0.5, 1, 1.5 | 2, 3, 4, 6 as floats 0x00000000,
  // 0x3F000000, 0x3F800000, 0x3FC00000 | 0x40000000, 0x40400000, 0x40800000, 0x40C00000.
  constexpr uint32_t kTopLow = 0x3F3F3F00u, kTopHigh = 0x40404040u;
  constexpr uint32_t kSecondLow = 0xC0800000u, kSecondHigh = 0xC0804000u;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int half = 0; half < 2; ++half) {
    const uint32_t select = (packed >> (16 * half)) & 0x7777u;  // 4 magnitudes, bit 3 cleared
    const uint32_t top = nvh::byte_perm(kTopLow, kTopHigh, select);
    const uint32_t second = nvh::byte_perm(kSecondLow, kSecondHigh, select);
    const uint32_t codes01 = nvh::byte_perm(second, top, 0x5140u);  // {2nd0, top0, 2nd1, top1}
    const uint32_t codes23 = nvh::byte_perm(second, top, 0x7362u);
    const uint32_t upper[4] = {codes01 << 16, codes01 & 0xFFFF0000u, codes23 << 16,
                               codes23 & 0xFFFF0000u};
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int i = 0; i < 4; ++i) {
      const int code = 4 * half + i;
      const uint32_t sign = (packed << (28 - 4 * code)) & 0x80000000u;
      out[code] = nvh::bits_to_float(upper[i] | sign);
    }
  }
}

// The dequant contract's scale: float(e4m3) * weight_scale_2, rounded to fp32
// before it meets the E2M1 value (DESIGN.md fixes this order).
NVH_HD NVH_INLINE float dequant_scale(uint8_t e4m3_scale, float global_scale) {
  return nvh::mul_rn(nvh::e4m3_to_float(e4m3_scale), global_scale);
}

}  // namespace nvfp4
