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

// Eight E2M1 codes to four packed pairs of 16-bit floats (codes 2i, 2i+1 in
// pair i, even code in the low half), branch-free, for the tensor-core GEMV
// whose fragments hold 16-bit pairs. Per four codes: one or two table prmts
// (fp16 values have a zero low byte; bf16 values need two bytes), then per
// pair one prmt to interleave and one prmt plus one lop3 to set the signs.
template <nvh::HalfKind kKind>
NVH_HD NVH_INLINE void decode_e2m1x8_pairs(uint32_t packed, uint32_t pairs[4]) {
  // Top bytes of 0, 0.5, 1, 1.5 | 2, 3, 4, 6: fp16 0x0000 0x3800 0x3C00 0x3E00 | 0x4000 0x4200 0x4400 0x4600;
  // bf16 0x0000 0x3F00 0x3F80 0x3FC0 | 0x4000 0x4040 0x4080 0x40C0 (second bytes 00 00 80 C0 | 00 40 80 C0).
  constexpr bool kFp16 = kKind == nvh::HalfKind::fp16;
  constexpr uint32_t kTopLow = kFp16 ? 0x3E3C3800u : 0x3F3F3F00u, kTopHigh = kFp16 ? 0x46444240u : 0x40404040u;
  constexpr uint32_t kSecondLow = 0xC0800000u, kSecondHigh = 0xC0804000u;
  // Sign bits: code 2i's is bit 3 of byte i, code 2i+1's bit 7. Byte i of
  // (packed << 4) put in byte 1 brings the first to bit 15, byte i of packed
  // put in byte 3 brings the second to bit 31.
  const uint32_t shifted = packed << 4;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int half = 0; half < 2; ++half) {
    const uint32_t select = (packed >> (16 * half)) & 0x7777u;
    const uint32_t top = nvh::byte_perm(kTopLow, kTopHigh, select);
    const uint32_t second = kFp16 ? 0u : nvh::byte_perm(kSecondLow, kSecondHigh, select);
    const uint32_t magnitude[2] = {nvh::byte_perm(second, top, 0x5140u), nvh::byte_perm(second, top, 0x7362u)};
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int j = 0; j < 2; ++j) {
      const uint32_t byte = static_cast<uint32_t>(2 * half + j);
      const uint32_t signs = nvh::byte_perm(packed, shifted, (byte << 12) | ((4 + byte) << 4));
      pairs[2 * half + j] = magnitude[j] | (signs & 0x80008000u);
    }
  }
}

// The dequant contract's scale: float(e4m3) * weight_scale_2, rounded to fp32
// before it meets the E2M1 value (DESIGN.md fixes this order).
NVH_HD NVH_INLINE float dequant_scale(uint8_t e4m3_scale, float global_scale) {
  return nvh::mul_rn(nvh::e4m3_to_float(e4m3_scale), global_scale);
}

}  // namespace nvfp4
