// prefill_scalar: the general dequantizer, for every shape prefill_vec8 does
// not take (odd block_size, K % 8 != 0, unaligned pointers).
//
// One packed byte at a time over a linear index (the seed's "before" layout):
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
// code runs on 64-bit indices with plain divisions (PrefillScalarOn<int64_t>).
#pragma once

#include <cstdint>

#include "harness/fast_divmod.h"
#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/fp4_codec.cuh"
#include "kernels/nvfp4_matmul/probes.h"

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

  // One packed byte's loads: its codes and the scale of its low nibble, with
  // the row, column and scale block they came from.
  template <class Index>
  struct ByteLoad {
    Index row, k, block;
    uint8_t codes, low_scale;
  };

  template <class Index>
  NVH_HD static ByteLoad<Index> load_byte(const Params& p, Index i) {
    ByteLoad<Index> b;
    b.row = divide(i, p.by_row_bytes);
    b.k = (i - b.row * static_cast<Index>(p.row_bytes)) * 2;
    b.block = divide(b.k, p.by_block_size);
    b.codes = nvh::load_u8(p.packed + i);
    b.low_scale = nvh::load_u8(p.scales + b.row * static_cast<Index>(p.scale_cols) + b.block);
    return b;
  }

  // Both values of a loaded byte, rounded, at k and k + 1 (k + 1 < K or not).
  // kPaired: K and block_size even and the scratch 4-byte aligned (decided
  // once per launch), so every byte has both nibbles, under one scale, and
  // lands on one aligned 4-byte pair: none of the checks below is needed.
  template <nvh::HalfKind kKind, bool kPaired, class Index>
  NVH_HD static void store_byte(const Params& p, const ByteLoad<Index>& b, float global_scale) {
    float values[2];
    decode_e2m1x2(b.codes, values);
    const float low_scale = dequant_scale(b.low_scale, global_scale);
    uint16_t* out = p.scratch + b.row * static_cast<Index>(p.K) + b.k;
    const uint16_t low = nvh::round_to_half_bits(nvh::mul_rn(values[0], low_scale), kKind);
    if constexpr (kPaired) {
      const uint16_t high = nvh::round_to_half_bits(nvh::mul_rn(values[1], low_scale), kKind);
      nvh::store_u32(out, uint32_t{low} | (uint32_t{high} << 16));
      return;
    }
    if (NVFP4_PROBE(b.k + 1 >= static_cast<Index>(p.K))) {  // the pad nibble of an odd K
      nvh::store_u16(out, low);
      return;
    }
    // The high nibble starts the next scale block exactly when k + 1 is a multiple of block_size.
    const bool next_block = b.k + 1 == (b.block + 1) * static_cast<Index>(p.block_size);
    const uint8_t* scale_row = p.scales + b.row * static_cast<Index>(p.scale_cols);
    const float high_scale =
        NVFP4_PROBE(next_block) ? dequant_scale(nvh::load_u8(scale_row + b.block + 1), global_scale)
                                : low_scale;
    const uint16_t high = nvh::round_to_half_bits(nvh::mul_rn(values[1], high_scale), kKind);
    // One 4-byte store where the pair is aligned (even K, aligned scratch):
    // a warp then writes whole 128-byte lines instead of two half-filled ones.
    if (NVFP4_PROBE(reinterpret_cast<uintptr_t>(out) % 4 == 0)) {
      nvh::store_u32(out, uint32_t{low} | (uint32_t{high} << 16));
    } else {
      nvh::store_u16(out, low);
      nvh::store_u16(out + 1, high);
    }
  }

  // Two bytes per trip, a grid stride apart (so a warp's loads and stores
  // stay contiguous), both bytes' loads issued before either's stores: with
  // one byte in flight per thread the kernel waited on memory latency (29.4
  // us at 4096x4096 on the H200 against 25.8 with two; three or four bytes
  // measured slower, see PERF.md).
  static constexpr int kBytesPerTrip = 2;

  template <nvh::HalfKind kKind, bool kPaired, class Index, class Ctx>
  NVH_HD static void bytes(Ctx& ctx, const Params& p) {
    const Index total = static_cast<Index>(p.N * p.row_bytes);
    const Index stride = static_cast<Index>(ctx.grid_dim().x) * ctx.block_dim().x;
    const float global_scale = nvh::load_generic_f32(p.global_scale);
    for (Index i = static_cast<Index>(ctx.block_idx().x) * ctx.block_dim().x + ctx.thread_idx().x;
         NVFP4_PROBE(i < total); i += kBytesPerTrip * stride) {
      const ByteLoad<Index> first = load_byte(p, i);
      const bool has_second = i + stride < total;
      ByteLoad<Index> second{};
      if (NVFP4_PROBE(has_second)) second = load_byte(p, i + stride);
      store_byte<kKind, kPaired>(p, first, global_scale);
      if (has_second) store_byte<kKind, kPaired>(p, second, global_scale);
    }
  }

  // The launch's parameters, with the divisions prepared.
  static Params make_params(const uint8_t* packed, const uint8_t* scales, const float* global_scale,
                            uint16_t* scratch, int64_t N, int64_t K, int64_t block_size,
                            nvh::HalfKind kind) {
    const int64_t row_bytes = (K + 1) / 2, scale_cols = (K + block_size - 1) / block_size;
    return Params{packed,
                  scales,
                  global_scale,
                  scratch,
                  N,
                  K,
                  block_size,
                  scale_cols,
                  row_bytes,
                  kind,
                  nvh::FastDivmod::make(static_cast<uint32_t>(row_bytes)),
                  nvh::FastDivmod::make(static_cast<uint32_t>(block_size))};
  }

  // The paired case of store_byte: K and block_size even, scratch 4-byte aligned.
  NVH_HD static bool paired(const Params& p) {
    return p.K % 2 == 0 && p.block_size % 2 == 0 && reinterpret_cast<uintptr_t>(p.scratch) % 4 == 0;
  }

  // 32-bit indices while every index, and every index plus the trip's
  // strides, fits (a stride is at most the byte count plus one block).
  static bool narrow_indices(const Params& p) {
    return p.N * p.row_bytes * (kBytesPerTrip + 2) < (int64_t{1} << 32) &&
           p.N * p.K < (int64_t{1} << 32);
  }

  static nvh::LaunchShape shape(const Params& p, int multiprocessors) {
    const int64_t total = p.N * p.row_bytes;
    const int64_t blocks_needed = (total + kMaxBlockThreads - 1) / kMaxBlockThreads;
    // Enough blocks to fill the device several times over; the loop covers the rest.
    // No branch coverage below: a GPU reports multiprocessors, the host executor none; gcov sees
    // only the host.
    const int64_t cap =
        int64_t{multiprocessors > 0 ? multiprocessors : 8} * 32;  // LCOV_EXCL_BR_LINE
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>(blocks_needed < cap ? blocks_needed : cap), 1, 1};
    return s;
  }
};

// The kernel on one index width, chosen by the launcher with
// PrefillScalar::narrow_indices. Two kernels rather than one with a branch:
// the 64-bit path needs 44 registers, and in one kernel the 32-bit path paid
// for them in occupancy (30.2 us against 27.4 us at 4096x4096 on the H200).
template <class Index>
struct PrefillScalarOn : PrefillScalar {
  // The 32-bit kernel fits all 2048 threads of a multiprocessor (32 registers, no spills).
  static constexpr int kMinBlocksPerSM = sizeof(Index) == 4 ? 8 : 1;

  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void bytes_of_kind(Ctx& ctx, const Params& p) {
    if (NVFP4_PROBE(paired(p))) {
      bytes<kKind, true, Index>(ctx, p);
    } else {
      bytes<kKind, false, Index>(ctx, p);
    }
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    if (NVFP4_PROBE(p.kind == nvh::HalfKind::fp16)) {
      bytes_of_kind<nvh::HalfKind::fp16>(ctx, p);
    } else {
      bytes_of_kind<nvh::HalfKind::bf16>(ctx, p);
    }
  }
};

}  // namespace nvfp4
