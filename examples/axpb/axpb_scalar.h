// scalar: one element per thread; takes any n and any 4-byte-aligned x, y.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"

namespace axpb {

struct ScalarKernel {
  static constexpr uint32_t kBlockThreads = 256;
  struct Params {
    const float* x;
    float* y;
    int64_t n;
    float a, b;
  };

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t i = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x;
    if (i >= p.n) return;
    nvh::store_f32(p.y + i, nvh::fma_rn(p.a, nvh::load_generic_f32(p.x + i), p.b));
  }

  static nvh::LaunchShape shape(const Params& p) {
    nvh::LaunchShape s;
    s.block = {kBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>((p.n + kBlockThreads - 1) / kBlockThreads), 1, 1};
    return s;
  }
};

}  // namespace axpb
