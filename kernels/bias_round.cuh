// bias_round: the GPU GEMM step's fallback epilogue. cublasGemmEx wrote the
// fp32 accumulators; this adds the bias in fp32 and rounds once, so the
// result rounds exactly like the fused cuBLASLt epilogue and the host loop.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"

namespace nvfp4 {

struct BiasRound {
  static constexpr uint32_t kMaxBlockThreads = 256;

  struct Params {
    const float* acc;      // [M, N] fp32 accumulators
    const uint16_t* bias;  // [N] or null
    uint16_t* Y;           // [M, N]
    int64_t M, N;
    nvh::HalfKind kind;
  };

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t total = p.M * p.N;
    const int64_t stride = int64_t{ctx.grid_dim().x} * ctx.block_dim().x;
    for (int64_t i = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x; i < total;
         i += stride) {
      float v = p.acc[i];
      if (p.bias) v = nvh::add_rn(v, nvh::half_bits_to_float(p.bias[i % p.N], p.kind));
      p.Y[i] = nvh::round_to_half_bits(v, p.kind);
    }
  }

  static nvh::LaunchShape shape(const Params& p) {
    const int64_t blocks = (p.M * p.N + kMaxBlockThreads - 1) / kMaxBlockThreads;
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>(blocks < 8192 ? blocks : 8192), 1, 1};
    return s;
  }
};

}  // namespace nvfp4
