// prefill_scalar: the general dequantizer, for every shape prefill_vec8 does
// not take (odd block_size, K % 8 != 0, unaligned pointers).
//
// One packed byte per thread over a linear index (the seed's "before" layout):
// the row and the byte within it come from a division, each nibble finds its
// own scale block (an odd block_size can split a byte between two scales),
// and an odd K leaves the last byte's high nibble as padding that is never
// written. Kept lean where that costs nothing in generality: index arithmetic
// in 32 bits whenever the weight fits, with the divisions done as a
// multiply-high by a reciprocal prepared once per launch (fast_divmod.h; a
// 64-bit divide is some hundred instructions, a 32-bit one dozens), one
// division for the scale block of both nibbles, weight_scale_2 read once per
// thread, and a two-code branch-free decode instead of the toolkit's
// conversion, which Hopper runs as a software loop. Past 2^31 bytes the same
// code runs on 64-bit indices with plain divisions.
#pragma once

#include <cstdint>

#include "harness/fast_divmod.h"
#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/fp4_codec.cuh"
#include "kernels/probes.h"

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
    nvh::FastDivmod by_row_bytes, by_block_size;  // for the 32-bit path
  };

  // Quotients: the prepared reciprocal on 32-bit indices, a divide on 64-bit ones.
  NVH_HD static uint32_t divide(uint32_t n, const nvh::FastDivmod& d) { return d.div(n); }
  NVH_HD static int64_t divide(int64_t n, const nvh::FastDivmod& d) { return n / d.divisor; }

  // Both values of one packed byte, rounded, at k and k + 1 (k + 1 < K or not).
  // (Issuing four bytes' loads before any store measured slower on the H200:
  // the extra registers halved occupancy; see PERF.md.)
  template <nvh::HalfKind kKind, class Index>
  NVH_HD static void dequant_byte(const Params& p, Index i, float global_scale) {
    const Index row = divide(i, p.by_row_bytes);
    const Index k = (i - row * static_cast<Index>(p.row_bytes)) * 2;
    float values[2];
    decode_e2m1x2(nvh::load_u8(p.packed + i), values);
    const Index block = divide(k, p.by_block_size);
    const uint8_t* scale_row = p.scales + row * static_cast<Index>(p.scale_cols);
    const float low_scale = dequant_scale(nvh::load_u8(scale_row + block), global_scale);
    uint16_t* out = p.scratch + row * static_cast<Index>(p.K) + k;
    const uint16_t low = nvh::round_to_half_bits(nvh::mul_rn(values[0], low_scale), kKind);
    if (NVFP4_PROBE(k + 1 >= static_cast<Index>(p.K))) {  // the pad nibble of an odd K
      out[0] = low;
      return;
    }
    // The high nibble starts the next scale block exactly when k + 1 is a multiple of block_size.
    const bool next_block = k + 1 == (block + 1) * static_cast<Index>(p.block_size);
    const float high_scale =
        NVFP4_PROBE(next_block) ? dequant_scale(nvh::load_u8(scale_row + block + 1), global_scale) : low_scale;
    const uint16_t high = nvh::round_to_half_bits(nvh::mul_rn(values[1], high_scale), kKind);
    // One 4-byte store where the pair is aligned (even K, aligned scratch):
    // a warp then writes whole 128-byte lines instead of two half-filled ones.
    if (NVFP4_PROBE(reinterpret_cast<uintptr_t>(out) % 4 == 0)) {
      nvh::store_u32(out, uint32_t{low} | (uint32_t{high} << 16));
    } else {
      out[0] = low;
      out[1] = high;
    }
  }

  template <nvh::HalfKind kKind, class Index, class Ctx>
  NVH_HD static void bytes(Ctx& ctx, const Params& p) {
    const Index total = static_cast<Index>(p.N * p.row_bytes);
    const Index stride = static_cast<Index>(ctx.grid_dim().x) * ctx.block_dim().x;
    const float global_scale = *p.global_scale;
    for (Index i = static_cast<Index>(ctx.block_idx().x) * ctx.block_dim().x + ctx.thread_idx().x;
         NVFP4_PROBE(i < total); i += stride) {
      dequant_byte<kKind, Index>(p, i, global_scale);
    }
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    // 32-bit indices while every index, and every index plus a stride, fits.
    const bool narrow = p.N * p.row_bytes * 2 < (int64_t{1} << 32) && p.N * p.K < (int64_t{1} << 32);
    if (NVFP4_PROBE(p.kind == nvh::HalfKind::fp16)) {
      NVFP4_PROBE(narrow) ? bytes<nvh::HalfKind::fp16, uint32_t>(ctx, p) : bytes<nvh::HalfKind::fp16, int64_t>(ctx, p);
    } else {
      NVFP4_PROBE(narrow) ? bytes<nvh::HalfKind::bf16, uint32_t>(ctx, p) : bytes<nvh::HalfKind::bf16, int64_t>(ctx, p);
    }
  }

  static nvh::LaunchShape shape(const Params& p, int multiprocessors) {
    const int64_t total = p.N * p.row_bytes;
    const int64_t blocks_needed = (total + kMaxBlockThreads - 1) / kMaxBlockThreads;
    // Enough blocks to fill the device several times over; the loop covers the rest.
    // No branch coverage below: a GPU reports multiprocessors, the host executor none; gcov sees only the host.
    const int64_t cap = int64_t{multiprocessors > 0 ? multiprocessors : 8} * 32;  // LCOV_EXCL_BR_LINE
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>(blocks_needed < cap ? blocks_needed : cap), 1, 1};
    return s;
  }
};

}  // namespace nvfp4
