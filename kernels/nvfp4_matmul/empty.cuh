// empty: M, N or K is zero. With K == 0 the product is an empty sum, so
// Y = 0 + bias (rounded once, as the GEMM step would); with M or N zero there
// is nothing to write and no launch happens.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/probes.h"

namespace nvfp4 {

struct EmptyFill {
  static constexpr uint32_t kMaxBlockThreads = 256;
  // Blocks in the grid at most; past kMaxBlocks * kMaxBlockThreads outputs a thread loops.
  static constexpr uint32_t kMaxBlocks = 4096;

  struct Params {
    const uint16_t* bias;  // [N] or null
    uint16_t* Y;           // [M, N]
    int64_t M, N;
    nvh::HalfKind kind;
  };

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t total = p.M * p.N;
    const int64_t stride = int64_t{ctx.grid_dim().x} * ctx.block_dim().x;
    for (int64_t i = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x;
         NVFP4_PROBE(i < total); i += stride) {
      const float bias = NVFP4_PROBE(p.bias) ? nvh::half_bits_to_float(
                                                   nvh::load_generic_u16(p.bias + i % p.N), p.kind)
                                             : 0.0f;
      nvh::store_u16(p.Y + i, nvh::round_to_half_bits(nvh::add_rn(0.0f, bias), p.kind));
    }
  }

  static nvh::LaunchShape shape(const Params& p) {
    const int64_t blocks = (p.M * p.N + kMaxBlockThreads - 1) / kMaxBlockThreads;
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>(blocks < kMaxBlocks ? blocks : kMaxBlocks), 1, 1};
    return s;
  }
};

}  // namespace nvfp4
