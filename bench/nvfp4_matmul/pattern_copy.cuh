// pattern_copy: prefill_vec8's memory traffic with none of its arithmetic
// (one 4-byte load and one 16-byte store per thread per row, the same grid).
// Its time is the floor that access pattern allows on this GPU, so the bench
// can say how much of prefill_vec8's gap to the copy ceiling is the pattern
// and how much is the kernel.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/prefill_vec8.cuh"

namespace nvfp4 {

struct PatternCopy {
  static constexpr uint32_t kMaxBlockThreads = 256;
  static constexpr int kRowsPerThread = PrefillVec8::kRowsPerThread;  // the route's grid

  struct Params {
    const uint8_t* packed;  // [N, K/2]
    uint16_t* scratch;      // [N, K]
    int64_t N, K;
  };

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t chunk = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x;
    if (chunk >= p.K / 8) return;
    const int64_t stride = ctx.grid_dim().y;
    for (int64_t row = ctx.block_idx().y; row < p.N; row += kRowsPerThread * stride) {
      uint32_t words[kRowsPerThread] = {};
      for (int r = 0; r < kRowsPerThread; ++r) {
        if (row + r * stride < p.N)
          words[r] = nvh::load_u32(p.packed + (row + r * stride) * (p.K / 2) + chunk * 4);
      }
      for (int r = 0; r < kRowsPerThread; ++r) {
        const int64_t n = row + r * stride;
        if (n < p.N)
          nvh::store_u32x4(p.scratch + n * p.K + chunk * 8,
                           {words[r], words[r] ^ 1u, words[r] ^ 2u, words[r] ^ 3u});
      }
    }
  }

  static nvh::LaunchShape shape(const Params& p) {
    const int64_t chunks = p.K / 8, rows = (p.N + kRowsPerThread - 1) / kRowsPerThread;
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>((chunks + kMaxBlockThreads - 1) / kMaxBlockThreads),
              static_cast<uint32_t>(rows < 65535 ? rows : 65535), 1};
    return s;
  }
};

}  // namespace nvfp4
