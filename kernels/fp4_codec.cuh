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

// The two E2M1 codes of one packed byte (low nibble first) to floats, with the
// same tables as decode_e2m1x8 and no work for codes that are not there.
NVH_HD NVH_INLINE void decode_e2m1x2(uint8_t byte, float out[2]) {
  constexpr uint32_t kTopLow = 0x3F3F3F00u, kTopHigh = 0x40404040u;
  constexpr uint32_t kSecondLow = 0xC0800000u, kSecondHigh = 0xC0804000u;
  const uint32_t select = byte & 0x77u;  // the two magnitudes as selector nibbles 0 and 1
  const uint32_t top = nvh::byte_perm(kTopLow, kTopHigh, select);
  const uint32_t second = nvh::byte_perm(kSecondLow, kSecondHigh, select);
  const uint32_t codes01 = nvh::byte_perm(second, top, 0x5140u);
  out[0] = nvh::bits_to_float((codes01 << 16) | ((uint32_t{byte} & 0x08u) << 28));
  out[1] = nvh::bits_to_float((codes01 & 0xFFFF0000u) | ((uint32_t{byte} & 0x80u) << 24));
}

// Eight E2M1 codes to four packed pairs of 16-bit floats by shifts and masks
// alone, no table lookups (the tensor-core GEMV is bound by the integer/logic
// pipe, where prmt runs; shifts can go to the multiply pipe). Pair i holds
// code i in its low half and code i + 4 in its high half (the two are 16 bits
// apart in the word, so one shift places both), each as e2m1 * 2^-bias:
// the code's three magnitude bits become the float's two lowest exponent
// bits and its top mantissa bit, and its sign the float's sign. Exponent
// field 0 makes code 1 (0.5) a subnormal of the same scale, so multiplying
// by kSpreadRestore (2^bias: 2^14 for fp16, 2^126 for bf16) gives every
// value exactly.
template <nvh::HalfKind kKind>
struct SpreadDecode {
  static constexpr bool kFp16 = kKind == nvh::HalfKind::fp16;
  static constexpr int kMagnitudeBit = kFp16 ? 9 : 6;  // where a code's lowest magnitude bit lands
  static constexpr uint32_t kMagnitudeMask = kFp16 ? 0x0E000E00u : 0x01C001C0u;
  static constexpr uint32_t kRestore = kFp16 ? 0x74007400u : 0x7E807E80u;  // 2^14 / 2^126 in both halves

  // x shifted left by `s` bits, right by -s when negative.
  NVH_HD static constexpr uint32_t shift(uint32_t x, int s) { return s >= 0 ? x << s : x >> -s; }

  NVH_HD static void pairs(uint32_t packed, uint32_t out[4]) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int i = 0; i < 4; ++i) {
      const uint32_t magnitude = shift(packed, kMagnitudeBit - 4 * i) & kMagnitudeMask;
      const uint32_t sign = (packed & (0x00080008u << (4 * i))) << (12 - 4 * i);  // bits 4i+3, 4i+19 to 15, 31
      out[i] = magnitude | sign;
    }
  }
};

// The dequant contract's scale: float(e4m3) * weight_scale_2, rounded to fp32
// before it meets the E2M1 value (DESIGN.md fixes this order).
NVH_HD NVH_INLINE float dequant_scale(uint8_t e4m3_scale, float global_scale) {
  return nvh::mul_rn(nvh::e4m3_to_float(e4m3_scale), global_scale);
}

}  // namespace nvfp4
