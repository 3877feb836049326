// read_alone: reads the decode GEMV's weight bytes (packed codes, then their
// E4M3 scales) with 16-byte loads and nothing else: no decode, no products,
// one store per thread only if an impossible value turns up (so the loads
// cannot be dropped). Its time is the floor for any kernel that must read
// those bytes once on this GPU, the read-only counterpart of the copy
// ceiling, so the bench can say how much of a GEMV's gap is the reading and
// how much is the kernel.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"

namespace nvfp4 {

struct ReadAlone {
  static constexpr uint32_t kMaxBlockThreads = 256;
  static constexpr int kLoadsInFlight = 4;  // 16-byte loads per thread per trip

  struct Params {
    const uint8_t* first;   // 16-byte aligned
    int64_t first_chunks;   // 16-byte chunks of `first`
    const uint8_t* second;  // 16-byte aligned
    int64_t second_chunks;
    uint32_t* sink;  // written only if a chunk xors to kNever
  };
  static constexpr uint32_t kNever = 0x9E3779B9u;

  template <class Ctx>
  NVH_HD static uint32_t fold(Ctx& ctx, const uint8_t* bytes, int64_t chunks) {
    const int64_t threads = int64_t{ctx.grid_dim().x} * ctx.block_dim().x;
    uint32_t acc = 0;
    int64_t i = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x;
    for (; i + (kLoadsInFlight - 1) * threads < chunks; i += kLoadsInFlight * threads) {
      nvh::U32x4 v[kLoadsInFlight];
      for (int j = 0; j < kLoadsInFlight; ++j)
        v[j] = nvh::load_u32x4(bytes + 16 * (i + j * threads));
      for (int j = 0; j < kLoadsInFlight; ++j) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
    }
    for (; i < chunks; i += threads) {
      const nvh::U32x4 v = nvh::load_u32x4(bytes + 16 * i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    return acc;
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const uint32_t acc = fold(ctx, p.first, p.first_chunks) ^ fold(ctx, p.second, p.second_chunks);
    if (acc == kNever) nvh::store_u32(p.sink, acc);
  }

  // A few waves of blocks, each thread striding over the arrays.
  static nvh::LaunchShape shape(int sm_count) {
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>(8 * sm_count), 1, 1};
    return s;
  }
};

}  // namespace nvfp4
