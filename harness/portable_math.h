// Arithmetic that must round the same on the GPU and in the host executor.
// On the device each helper is the one instruction it names; on the host it is
// the CUDA toolkit's own host implementation or plain IEEE-754 float
// arithmetic (the build forbids fma contraction on the host). Tests compare
// GPU and host results bit for bit, so any drift here shows up there.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "harness/host_memcheck.h"
#include "harness/kernel_ctx.h"

namespace nvh {

// a*b rounded once; __fmul_rn keeps nvcc from fusing it into a later add.
NVH_HD NVH_INLINE float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

NVH_HD NVH_INLINE float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// a*b+c rounded once, where a fused multiply-add is meant.
NVH_HD NVH_INLINE float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// Bits of `where_set` where `mask` is set, of `where_clear` elsewhere. On
// the device one lop3 (lookup table 0xE4 = (a & c) | (b & ~c)): left to
// itself ptxas splits this into two when it can see zeros in a shifted input.
NVH_HD NVH_INLINE uint32_t select_bits(uint32_t mask, uint32_t where_set, uint32_t where_clear) {
#if defined(__CUDA_ARCH__)
  uint32_t out;
  asm("lop3.b32 %0, %1, %2, %3, 0xE4;" : "=r"(out) : "r"(where_set), "r"(where_clear), "r"(mask));
  return out;
#else
  return (where_set & mask) | (where_clear & ~mask);
#endif
}

// PTX prmt in its default mode: byte i of the result is byte (s >> 4i) & 7
// of the 8-byte value {hi:lo}, or that byte's sign replicated when bit 3 of
// the selector nibble is set.
NVH_HD NVH_INLINE uint32_t byte_perm(uint32_t lo, uint32_t hi, uint32_t s) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(lo, hi, s);
#else
  const uint64_t bytes = (uint64_t{hi} << 32) | lo;
  uint32_t out = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t sel = (s >> (4 * i)) & 0xFu;
    uint32_t b = static_cast<uint32_t>(bytes >> (8 * (sel & 7u))) & 0xFFu;
    if (sel & 8u) b = (b & 0x80u) ? 0xFFu : 0x00u;
    out |= b << (8 * i);
  }
  return out;
#endif
}

NVH_HD NVH_INLINE float bits_to_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

NVH_HD NVH_INLINE uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

// Two floats to a packed pair of 16-bit floats, each rounded to nearest even;
// `lo` lands in the low half (the lower address).
NVH_HD NVH_INLINE uint32_t pack_half2_rn(float lo, float hi, HalfKind kind) {
  if (kind == HalfKind::fp16) {
    const __half2_raw r = __floats2half2_rn(lo, hi);
    return uint32_t{r.x} | (uint32_t{r.y} << 16);
  }
  const __nv_bfloat162_raw r = __floats2bfloat162_rn(lo, hi);
  return uint32_t{r.x} | (uint32_t{r.y} << 16);
}

NVH_HD NVH_INLINE uint16_t round_to_half_bits(float v, HalfKind kind) {
  if (kind == HalfKind::fp16) {
    const __half_raw r = __float2half_rn(v);
    return r.x;
  }
  const __nv_bfloat16_raw r = __float2bfloat16_rn(v);
  return r.x;
}

NVH_HD NVH_INLINE float half_bits_to_float(uint16_t bits, HalfKind kind) {
  if (kind == HalfKind::bf16) return bits_to_float(uint32_t{bits} << 16);
  __half_raw r;
  r.x = bits;
  return __half2float(__half(r));
}

// Two packed 16-bit pairs multiplied lane by lane, each product rounded to
// nearest once (the host's fp32 product is exact for 16-bit inputs, so its
// one rounding matches the device's HMUL2).
template <HalfKind kKind>
NVH_HD NVH_INLINE uint32_t mul_half2(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  uint32_t out;
  if constexpr (kKind == HalfKind::fp16) {
    const __half2 r =
        __hmul2(*reinterpret_cast<const __half2*>(&a), *reinterpret_cast<const __half2*>(&b));
    out = *reinterpret_cast<const uint32_t*>(&r);
  } else {
    const __nv_bfloat162 r = __hmul2(*reinterpret_cast<const __nv_bfloat162*>(&a),
                                     *reinterpret_cast<const __nv_bfloat162*>(&b));
    out = *reinterpret_cast<const uint32_t*>(&r);
  }
  return out;
#else
  const auto lo = [](uint32_t w) { return half_bits_to_float(static_cast<uint16_t>(w), kKind); };
  const auto hi = [](uint32_t w) {
    return half_bits_to_float(static_cast<uint16_t>(w >> 16), kKind);
  };
  return pack_half2_rn(lo(a) * lo(b), hi(a) * hi(b), kKind);
#endif
}

// Memory access. Kernel bodies read and write global and shared memory only
// through these functions (CONTRIBUTING.md). On the device each is the one
// instruction it names: the vector ones single 4-, 8- and 16-byte accesses
// (the caller guarantees the alignment; the dispatcher checks it), the
// "generic" ones and the stores the plain dereference they replace. On the
// host each is a memcpy after the host executor's memory check
// (host_memcheck.h: alignment, bounds, address space), so a kernel that
// would fault on the GPU, or read past its data there, fails on the host too.
struct U32x2 {
  uint32_t x, y;
};
struct U32x4 {
  uint32_t x, y, z, w;
};

#if !defined(__CUDA_ARCH__)
// The host side of every load below: the check, then the bytes at p as a T.
template <class T>
inline T host_load(const void* p, memcheck::Space space) {
  memcheck::check_access(p, sizeof(T), memcheck::Op::load, space);
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The host side of every store below; a store is a plain (generic) access.
template <class T>
inline void host_store(void* p, const T& v) {
  memcheck::check_access(p, sizeof(T), memcheck::Op::store, memcheck::Space::generic);
  std::memcpy(p, &v, sizeof v);
}
#endif

// Global memory through the read-only cache (ld.global.nc).
NVH_HD NVH_INLINE uint8_t load_u8(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return host_load<uint8_t>(p, memcheck::Space::global);
#endif
}

NVH_HD NVH_INLINE uint32_t load_u32(const void* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(static_cast<const unsigned int*>(p));
#else
  return host_load<uint32_t>(p, memcheck::Space::global);
#endif
}

NVH_HD NVH_INLINE U32x2 load_u32x2(const void* p) {
#if defined(__CUDA_ARCH__)
  const uint2 v = __ldg(static_cast<const uint2*>(p));
  return {v.x, v.y};
#else
  return host_load<U32x2>(p, memcheck::Space::global);
#endif
}

NVH_HD NVH_INLINE U32x4 load_u32x4(const void* p) {
#if defined(__CUDA_ARCH__)
  const uint4 v = __ldg(static_cast<const uint4*>(p));
  return {v.x, v.y, v.z, v.w};
#else
  return host_load<U32x4>(p, memcheck::Space::global);
#endif
}

// 4 bytes of global memory that another block of the same grid wrote
// (ld.global.cg: from the L2, never a line the L1 kept from earlier), read
// after the fences that make its store visible (kernel_ctx.h: fence_global).
NVH_HD NVH_INLINE float load_coherent_f32(const float* p) {
#if defined(__CUDA_ARCH__)
  return __ldcg(p);
#else
  return host_load<float>(p, memcheck::Space::global);
#endif
}

// 1, 2, 4 and 16 bytes from shared memory or any generic pointer (not
// through the read-only cache, which only global memory has): the plain
// dereference.
NVH_HD NVH_INLINE uint8_t load_generic_u8(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return *p;
#else
  return host_load<uint8_t>(p, memcheck::Space::generic);
#endif
}

NVH_HD NVH_INLINE uint16_t load_generic_u16(const void* p) {
#if defined(__CUDA_ARCH__)
  return *static_cast<const uint16_t*>(p);
#else
  return host_load<uint16_t>(p, memcheck::Space::generic);
#endif
}

NVH_HD NVH_INLINE uint32_t load_generic_u32(const void* p) {
#if defined(__CUDA_ARCH__)
  return *static_cast<const uint32_t*>(p);
#else
  return host_load<uint32_t>(p, memcheck::Space::generic);
#endif
}

NVH_HD NVH_INLINE float load_generic_f32(const float* p) {
#if defined(__CUDA_ARCH__)
  return *p;
#else
  return host_load<float>(p, memcheck::Space::generic);
#endif
}

NVH_HD NVH_INLINE U32x2 load_generic_u32x2(const void* p) {
#if defined(__CUDA_ARCH__)
  const uint2 v = *static_cast<const uint2*>(p);
  return {v.x, v.y};
#else
  return host_load<U32x2>(p, memcheck::Space::generic);
#endif
}

NVH_HD NVH_INLINE U32x4 load_generic_u32x4(const void* p) {
#if defined(__CUDA_ARCH__)
  const uint4 v = *static_cast<const uint4*>(p);
  return {v.x, v.y, v.z, v.w};
#else
  return host_load<U32x4>(p, memcheck::Space::generic);
#endif
}

// Stores: the plain assignment, to global or shared memory.
NVH_HD NVH_INLINE void store_u8(uint8_t* p, uint8_t v) {
#if defined(__CUDA_ARCH__)
  *p = v;
#else
  host_store(p, v);
#endif
}

NVH_HD NVH_INLINE void store_u16(uint16_t* p, uint16_t v) {
#if defined(__CUDA_ARCH__)
  *p = v;
#else
  host_store(p, v);
#endif
}

NVH_HD NVH_INLINE void store_u32(void* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
  *static_cast<uint32_t*>(p) = v;
#else
  host_store(p, v);
#endif
}

NVH_HD NVH_INLINE void store_f32(float* p, float v) {
#if defined(__CUDA_ARCH__)
  *p = v;
#else
  host_store(p, v);
#endif
}

NVH_HD NVH_INLINE void store_u32x4(void* p, U32x4 v) {
#if defined(__CUDA_ARCH__)
  *static_cast<uint4*>(p) = make_uint4(v.x, v.y, v.z, v.w);
#else
  host_store(p, v);
#endif
}

// E4M3 ("fn") byte to float; exact, NaN for 0x7F / 0xFF.
NVH_HD NVH_INLINE float e4m3_to_float(uint8_t byte) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(byte, __NV_E4M3);
  return __half2float(__half(h));
}

}  // namespace nvh
