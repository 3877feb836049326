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
// alone, no table lookups (the tensor-core GEMV is bound by the SM's
// instruction throughput, the integer/logic pipe where prmt and lop3 run the
// busiest). Pair i
// holds code i in its low half and code i + 4 in its high half (the two are
// 16 bits apart in the word, so one shift places both), each as
// e2m1 * 2^-kPairExp: the code's three magnitude bits become the float's two
// lowest exponent bits and its top mantissa bit, and its sign the float's
// sign. Exponent field 0 makes code 1 (0.5) a subnormal of the same scale.
//
// A float's sign sits 6 (fp16) or 9 (bf16) bits above where the magnitude's
// lowest bit goes, a code's only 3. So each word is first respread into two
// words, each holding four of the codes with their signs moved to that
// offset (one select of two shifted copies of the word: a single lop3); then
// each pair is at most one shift and one mask of its respread word. That is
// 11 instructions per word, against 16 for shifting magnitude and sign of
// every pair apart. The four codes of a respread word are chosen so no moved
// sign lands on another code's magnitude: every other code in fp16 (a sign
// 6 up would hit the next code), codes {0, 1, 4, 5} and {2, 3, 6, 7} in
// bf16 (9 up would hit the code two on).
//
// The 2^-kPairExp the bit placement leaves is made up outside the decode:
// scale_pairs() gives the E4M3 scale times a power of two `factor` (1 in
// fp16; in bf16 up to 2^119, since 448 * 2^119 < 2^128 is the most that
// fits), so that one HMUL2 of a pair by it is exact, and whatever power of
// two is still missing multiplies the fp32 sum of the products at the end
// (gemv_mma.cuh: FastScales, where weight_scale_2 joins in too).
template <nvh::HalfKind kKind>
struct SpreadDecode {
  static constexpr bool kFp16 = kKind == nvh::HalfKind::fp16;
  static constexpr uint32_t kPairMask =
      kFp16 ? 0x8E008E00u : 0x81C081C0u;  // sign and 3 magnitude bits, both halves
  // pairs() holds e2m1 * 2^-kPairExp: exponent field 1 is 2^-14 in fp16,
  // 2^-126 in bf16. fp16: 2^-14 * e2m1 * e4m3 is a multiple of 2^-24 below
  // 2^11 units, exact as is (factor 1). bf16: 2^-126 * e2m1 * e4m3 would
  // underflow, so the scale carries a factor of up to 2^kMaxFactorExp.
  static constexpr int kPairExp = kFp16 ? 14 : 126;
  static constexpr int kMaxFactorExp = kFp16 ? 0 : 119;

  NVH_HD static void pairs(uint32_t packed, uint32_t out[4]) {
    if constexpr (kFp16) {
      // Even codes: magnitudes in place, signs from 3 bits lower. Odd codes:
      // magnitudes from 3 bits higher, signs in place.
      const uint32_t even = nvh::select_bits(0x07070707u, packed, packed << 3);
      const uint32_t odd = nvh::select_bits(0x0E0E0E0Eu, packed >> 3, packed);
      out[0] = (even << 9) & kPairMask;
      out[1] = (odd << 8) & kPairMask;
      out[2] = (even << 1) & kPairMask;
      out[3] = odd & kPairMask;
    } else {
      // Both respread words put their four codes in one layout: magnitudes
      // at bits 2, 6, 18 and 22, signs 9 above, so pairs 1 and 3 need no
      // shift and pairs 0 and 2 one of 4. Codes {0, 1, 4, 5}: magnitudes
      // from 2 bits higher, signs from 8. Codes {2, 3, 6, 7}: magnitudes
      // from 6 bits lower, signs in place.
      const uint32_t low = nvh::select_bits(0x01DC01DCu, packed << 2, packed << 8);
      const uint32_t high = nvh::select_bits(0x01DC01DCu, packed >> 6, packed);
      out[0] = (low << 4) & kPairMask;
      out[1] = low & kPairMask;
      out[2] = (high << 4) & kPairMask;
      out[3] = high & kPairMask;
    }
  }

  // Two E4M3 scales (low byte first) as the pairs (s0 f, s0 f) and (s1 f, s1 f),
  // f = `factor` (a power of two, 1 in fp16, at most 2^kMaxFactorExp in
  // bf16; exact then for every byte, subnormal ones included), that multiply
  // pairs() into e2m1 * e4m3 * f * 2^-kPairExp. The NaN bytes 0x7F and 0xFF
  // become NaN pairs (the toolkit's conversion, one instruction on sm_89 and
  // later, checks them), so their weights are NaN, as the contract has them.
  NVH_HD static void scale_pairs(uint16_t two_scales, float factor, uint32_t out[2]) {
    const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(two_scales, __NV_E4M3);
    if constexpr (kFp16) {
      (void)factor;
      const uint32_t both = uint32_t{h.x} | (uint32_t{h.y} << 16);
      out[0] = nvh::byte_perm(both, 0u, 0x1010u);
      out[1] = nvh::byte_perm(both, 0u, 0x3232u);
    } else {
      const float s0 = nvh::mul_rn(nvh::half_bits_to_float(h.x, nvh::HalfKind::fp16), factor);
      const float s1 = nvh::mul_rn(nvh::half_bits_to_float(h.y, nvh::HalfKind::fp16), factor);
      out[0] = nvh::pack_half2_rn(s0, s0, kKind);
      out[1] = nvh::pack_half2_rn(s1, s1, kKind);
    }
  }
};

// The dequant contract's scale: float(e4m3) * weight_scale_2, rounded to fp32
// before it meets the E2M1 value (DESIGN.md fixes this order).
NVH_HD NVH_INLINE float dequant_scale(uint8_t e4m3_scale, float global_scale) {
  return nvh::mul_rn(nvh::e4m3_to_float(e4m3_scale), global_scale);
}

}  // namespace nvfp4
