// bias_broadcast: Y[m, n] = bias[n], so that the GPU GEMM step can add the
// product into Y with beta = 1 and round once (gemm_step_cuda.cu). cuBLASLt's
// own bias epilogue rounds a bf16 product before adding a bf16 bias (two
// roundings, caught on the H200 by the property suite), and with an fp32 bias
// it picks algorithms three times slower.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "kernels/probes.h"

namespace nvfp4 {

struct BiasBroadcast {
  static constexpr uint32_t kMaxBlockThreads = 256;

  struct Params {
    const uint16_t* bias;  // [N]
    uint16_t* Y;           // [M, N]
    int64_t M, N;
  };

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t total = p.M * p.N;
    const int64_t stride = int64_t{ctx.grid_dim().x} * ctx.block_dim().x;
    for (int64_t i = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x;
         NVFP4_PROBE(i < total);
         i += stride) {
      p.Y[i] = p.bias[i % p.N];
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
