// prefill_vec8: dequantize packed NVFP4 weights into the [N, K] fp16/bf16
// scratch that the GEMM step reads, eight values per thread.
//
// Taken when K % 8 == 0, block_size is even, B is 4-byte aligned and the
// scratch 16-byte aligned (dispatch.cc). Then a thread owns one 8-value chunk
// of a row: one 32-bit load of packed codes, one 16-byte store of results,
// and a warp touches 128 contiguous packed bytes and 512 contiguous scratch
// bytes. An even block_size keeps both nibbles of a byte under one scale.
//
// DequantChunk<kValues, kRows> is the same kernel with kValues values and
// kRows rows per thread; the route runs kValues = 8, kRows = 16
// (PrefillVec8). The benchmark's values-per-thread sweep runs 8, 16 and 32
// (needing K % 16 or K % 32 == 0) at 4 rows to test the published finding
// that wider chunks cost bandwidth, and its group depth times 2 to 16 rows.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/fp4_codec.cuh"
#include "kernels/nvfp4_matmul/probes.h"

namespace nvfp4 {

struct DequantParams {
  const uint8_t* packed;      // [N, K/2]
  const uint8_t* scales;      // [N, scale_cols] E4M3
  const float* global_scale;  // weight_scale_2
  uint16_t* scratch;          // [N, K]
  int64_t N, K, block_size, scale_cols;
  nvh::HalfKind kind;
};

template <int kValues, int kRows = 4>
struct DequantChunk {
  static_assert(kValues == 8 || kValues == 16 || kValues == 32,
                "one, two or four 32-bit words of codes");
  static constexpr uint32_t kMaxBlockThreads = 256;
  static constexpr uint32_t kMaxGridRows = 65535;  // CUDA's grid.y limit; rows beyond it loop
  static constexpr int kWords = kValues / 8;
  using Params = DequantParams;

  // Rows a thread dequantizes, all loads issued before the first row's work:
  // enough to spread its one-time setup and keep several loads in flight,
  // few enough to leave the grid wide. The route's 16 (PrefillVec8) against
  // 2 / 4 / 8 on the H200: 13.9 against 15.1 / 14.5 / 14.1 us at
  // 4096 x 4096, 10.8 against 11.5-11.9 at 6144 x 2048 and 2048 x 6144
  // (kernel time, bench group depth, 2026-12-01).
  static constexpr int kRowsPerThread = kRows;

  // Where a thread's chunk starts in the scale blocks: the block holding its
  // first value, and how many byte pairs remain in that block. The only
  // divisions, done once per thread, in 32 bits (K < 2^31, nvfp4_matmul.cc).
  struct ScaleCursor {
    uint32_t block;
    uint32_t pairs_left;
  };
  NVH_HD static ScaleCursor first_scale(uint32_t k0, uint32_t block_size) {
    return {k0 / block_size, (block_size - k0 % block_size) / 2};
  }

  // kValues / 8 words of packed codes from one aligned load.
  NVH_HD static void load_codes(const uint8_t* p, uint32_t words[kWords]) {
    if constexpr (kWords == 1) {
      words[0] = nvh::load_u32(p);
    } else if constexpr (kWords == 2) {
      const nvh::U32x2 v = nvh::load_u32x2(p);
      words[0] = v.x;
      words[1] = v.y;
    } else {
      const nvh::U32x4 v = nvh::load_u32x4(p);
      words[0] = v.x;
      words[1] = v.y;
      words[2] = v.z;
      words[3] = v.w;
    }
  }

  // Scaled, rounded and stored: eight decoded values under one scale.
  template <nvh::HalfKind kKind>
  NVH_HD static void store_eight(uint16_t* out, uint32_t word, float scale) {
    float values[8];
    decode_e2m1x8(word, values);
    uint32_t pairs[4];
    for (int pair = 0; pair < 4; ++pair) {
      pairs[pair] = nvh::pack_half2_rn(nvh::mul_rn(values[2 * pair], scale),
                                       nvh::mul_rn(values[2 * pair + 1], scale), kKind);
    }
    nvh::store_u32x4(out, {pairs[0], pairs[1], pairs[2], pairs[3]});
  }

  // One row's chunk when the whole chunk lies in one scale block
  // (block_size % kValues == 0, e.g. the usual 16): one scale, no cursor.
  template <nvh::HalfKind kKind>
  NVH_HD static void dequant_row_one_scale(const Params& p, int64_t row, int64_t k0, float scale,
                                           const uint32_t words[kWords]) {
    for (int w = 0; w < kWords; ++w)
      store_eight<kKind>(p.scratch + row * p.K + k0 + 8 * w, words[w], scale);
  }

  // One row's chunk for any even block_size: the scale cursor advances at
  // each block boundary inside the chunk.
  template <nvh::HalfKind kKind>
  NVH_HD static void dequant_row(const Params& p, int64_t row, int64_t k0, ScaleCursor at,
                                 float global_scale, const uint32_t words[kWords]) {
    const uint8_t* scale_row = p.scales + row * p.scale_cols;
    float scale = dequant_scale(nvh::load_u8(scale_row + at.block), global_scale);
    for (int w = 0; w < kWords; ++w) {
      float values[8];
      decode_e2m1x8(words[w], values);
      uint32_t pairs[4];
      for (int pair = 0; pair < 4; ++pair) {
        if (NVFP4_PROBE(at.pairs_left == 0)) {  // crossed into the next scale block
          ++at.block;
          at.pairs_left = static_cast<uint32_t>(p.block_size / 2);
          scale = dequant_scale(nvh::load_u8(scale_row + at.block), global_scale);
        }
        pairs[pair] = nvh::pack_half2_rn(nvh::mul_rn(values[2 * pair], scale),
                                         nvh::mul_rn(values[2 * pair + 1], scale), kKind);
        --at.pairs_left;
      }
      nvh::store_u32x4(p.scratch + row * p.K + k0 + 8 * w,
                       {pairs[0], pairs[1], pairs[2], pairs[3]});
    }
  }

  template <nvh::HalfKind kKind, bool kOneScale, class Ctx>
  NVH_HD static void rows(Ctx& ctx, const Params& p, int64_t chunk) {
    const float global_scale =
        nvh::load_generic_f32(p.global_scale);  // loaded once, kept in a register for every row
    const int64_t k0 = chunk * kValues;
    const ScaleCursor start =
        first_scale(static_cast<uint32_t>(k0), static_cast<uint32_t>(p.block_size));
    const int64_t stride = ctx.grid_dim().y;
    const uint8_t* codes = p.packed + chunk * (kValues / 2);
    for (int64_t row = ctx.block_idx().y; NVFP4_PROBE(row < p.N); row += kRowsPerThread * stride) {
      uint32_t words[kRowsPerThread][kWords];
      uint8_t scale_byte[kRowsPerThread] = {};
      for (int r = 0; r < kRowsPerThread; ++r) {
        const int64_t n = row + r * stride;
        if (NVFP4_PROBE(n >= p.N)) break;
        load_codes(codes + n * (p.K / 2), words[r]);
        if (kOneScale) scale_byte[r] = nvh::load_u8(p.scales + n * p.scale_cols + start.block);
      }
      for (int r = 0; r < kRowsPerThread; ++r) {
        const int64_t n = row + r * stride;
        if (NVFP4_PROBE(n >= p.N)) break;
        if (kOneScale) {
          dequant_row_one_scale<kKind>(p, n, k0, dequant_scale(scale_byte[r], global_scale),
                                       words[r]);
        } else {
          dequant_row<kKind>(p, n, k0, start, global_scale, words[r]);
        }
      }
    }
  }

  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void rows_for_block_size(Ctx& ctx, const Params& p, int64_t chunk) {
    if (NVFP4_PROBE(p.block_size % kValues == 0)) {
      rows<kKind, true>(ctx, p, chunk);
    } else {
      rows<kKind, false>(ctx, p, chunk);
    }
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t chunk = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x;
    if (NVFP4_PROBE(chunk >= p.K / kValues)) return;
    // The output type decided once, so the conversions compile to one instruction each.
    if (NVFP4_PROBE(p.kind == nvh::HalfKind::fp16)) {
      rows_for_block_size<nvh::HalfKind::fp16>(ctx, p, chunk);
    } else {
      rows_for_block_size<nvh::HalfKind::bf16>(ctx, p, chunk);
    }
  }

  static nvh::LaunchShape shape(const Params& p) {
    const int64_t chunks = p.K / kValues;
    const uint32_t threads = chunks >= 256 ? 256 : static_cast<uint32_t>((chunks + 31) / 32 * 32);
    nvh::LaunchShape s;
    s.block = {threads, 1, 1};
    const int64_t row_blocks = (p.N + kRowsPerThread - 1) / kRowsPerThread;
    s.grid = {static_cast<uint32_t>((chunks + threads - 1) / threads),
              static_cast<uint32_t>(row_blocks < kMaxGridRows ? row_blocks : kMaxGridRows), 1};
    return s;
  }
};

using PrefillVec8 = DequantChunk<8, 16>;

}  // namespace nvfp4
