// A test-only kernel of blocks that count their arrivals (kernel_ctx.h:
// atomic_inc_global, fence_global): grid.y tiles of grid.x blocks; every
// thread of every block stores its part, fences, the block counts itself in
// on its tile's counter, and the tile's last block to arrive adds every
// block's part in block order. The pattern a split-K kernel's last block
// uses, here for the tests of the host executor's fence rules
// (host_memcheck_test.cc) and of the atomics on every backend
// (last_block_test.cc). `skip` leaves one fence out to show the rule firing.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"

namespace nvh {
namespace test_kernels {

enum class SkipFence : uint8_t {
  none,
  writer,  // thread (1,1,0) of block (1,0,0) does not fence its part
  reader,  // the counting thread does not fence after the count
};

struct LastBlockSums {
  struct Params {
    float* parts;        // [tiles][blocks][threads]
    uint32_t* counters;  // [tiles], zero before the launch and after it
    float* out;          // [tiles][threads]
    SkipFence skip;
  };
  // Launched in the tests' shapes only (a few small blocks).
  static constexpr uint32_t kMaxBlockThreads = 1024;

  template <class Ctx>
  NVH_HD static float part_value(const Ctx& ctx, uint32_t block, uint32_t thread) {
    return static_cast<float>((block + 1) * (thread + 1) + ctx.block_idx().y);
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const uint32_t threads = ctx.block_dim().x * ctx.block_dim().y;
    const uint32_t t = ctx.thread_idx().x + ctx.block_dim().x * ctx.thread_idx().y;
    const uint32_t blocks = ctx.grid_dim().x, tile = ctx.block_idx().y;
    float* parts = p.parts + uint64_t{tile} * blocks * threads;
    store_f32(parts + ctx.block_idx().x * threads + t, part_value(ctx, ctx.block_idx().x, t));
    const bool culprit =
        ctx.block_idx().x == 1 && ctx.thread_idx().x == 1 && ctx.thread_idx().y == 1;
    if (!(p.skip == SkipFence::writer && culprit)) ctx.fence_global();
    ctx.sync_threads();
    uint32_t* last = ctx.template shared_mem<uint32_t>();
    if (t == 0) {
      const uint32_t before = ctx.atomic_inc_global(p.counters + tile, blocks - 1);
      if (p.skip != SkipFence::reader) ctx.fence_global();
      store_u32(last, before == blocks - 1 ? 1u : 0u);
    }
    ctx.sync_threads();
    if (!load_generic_u32(last)) return;
    float sum = load_coherent_f32(parts + t);
    for (uint32_t b = 1; b < blocks; ++b)
      sum = add_rn(sum, load_coherent_f32(parts + b * threads + t));
    store_f32(p.out + uint64_t{tile} * threads + t, sum);
  }
};

}  // namespace test_kernels
}  // namespace nvh
