// bias_round: the GPU GEMM step's fallback epilogue. cublasGemmEx wrote the
// fp32 accumulators; this adds the bias in fp32 and rounds once, so the
// result rounds exactly like the fused cuBLASLt epilogue and the host loop.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/probes.h"

namespace nvfp4 {

struct BiasRound {
  static constexpr uint32_t kMaxBlockThreads = 256;
  static constexpr uint32_t kMaxGridRows = 65535;  // CUDA's grid.y limit; rows beyond it loop

  struct Params {
    const float* acc;      // [M, N] fp32 accumulators
    const uint16_t* bias;  // [N] or null
    uint16_t* Y;           // [M, N]
    int64_t M, N;
    nvh::HalfKind kind;
  };

  // Row m = blockIdx.y (a grid-stride loop past 65535 rows), columns over x:
  // no division per element.
  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t n = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x;
    if (NVFP4_PROBE(n >= p.N)) return;
    const float bias = NVFP4_PROBE(p.bias)
                           ? nvh::half_bits_to_float(nvh::load_generic_u16(p.bias + n), p.kind)
                           : 0.0f;
    for (int64_t m = ctx.block_idx().y; NVFP4_PROBE(m < p.M); m += ctx.grid_dim().y) {
      float v = nvh::load_generic_f32(p.acc + m * p.N + n);
      if (p.bias) v = nvh::add_rn(v, bias);
      nvh::store_u16(p.Y + m * p.N + n, nvh::round_to_half_bits(v, p.kind));
    }
  }

  static nvh::LaunchShape shape(const Params& p) {
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>((p.N + kMaxBlockThreads - 1) / kMaxBlockThreads),
              static_cast<uint32_t>(p.M < kMaxGridRows ? p.M : kMaxGridRows), 1};
    return s;
  }
};

}  // namespace nvfp4
