// A test-only kernel of blocks that wait for one another (kernel_ctx.h:
// LaunchShape::co_resident, wait_global_at_least): grid.y tiles of grid.x
// blocks; every thread stores its part, and after a block barrier one
// thread fences for the block (a fence is cumulative) and arrives on its
// tile's counter, waits until every block of the tile has arrived, leaves
// (the tile's last leaver wraps the counter back to 0), fences, and then
// adds its share of the tile (thread t's sum, for the t with t % grid.x ==
// block) over every block's part in block order. The pattern of a K split
// whose blocks add their slices among themselves, with no second kernel;
// `fault` breaks it once for the host executor's rules
// (co_resident_test.cc).
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"

namespace nvh {
namespace test_kernels {

enum class CoResidentFault : uint8_t {
  none,
  no_writer_fence,     // the arriving thread fences before the block barrier, not after it
  no_reader_fence,     // the waiting thread does not fence after the wait
  read_after_wait,     // it fences after its arrival, then reads a part right after the wait
  wait_too_long,       // waits for one arrival more than the tile has: never comes
  one_waits_too_long,  // block 0 waits past the counter's last value; the others finish
  stuck_after_wait,    // after the waits, thread 0 waits on an mbarrier no thread arrives on
  no_parts,            // legal: no thread stores a part, so the arrival needs no fence before it
  two_rounds,  // legal: the blocks meet again on a second counter a tile (p.counters + tiles)
};

struct TileShareSums {
  struct Params {
    float* parts;        // [tiles][blocks][threads]
    uint32_t* counters;  // [2][tiles] (two_rounds uses the second), zero before and after
    float* out;          // [tiles][threads]
    CoResidentFault fault;
  };
  static constexpr uint32_t kMaxBlockThreads = 1024;

  NVH_HD static float part_value(uint32_t tile, uint32_t block, uint32_t thread) {
    return static_cast<float>((block + 1) * (thread + 1) + tile);
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const uint32_t threads = ctx.block_dim().x, t = ctx.thread_idx().x;
    const uint32_t blocks = ctx.grid_dim().x, block = ctx.block_idx().x, tile = ctx.block_idx().y;
    float* parts = p.parts + uint64_t{tile} * blocks * threads;
    uint64_t* never = ctx.template shared_mem<uint64_t>();  // stuck_after_wait's mbarrier
    if (p.fault == CoResidentFault::stuck_after_wait && t == 0) ctx.mbarrier_init(never, 1);
    if (p.fault != CoResidentFault::no_parts) {
      store_f32(parts + block * threads + t, part_value(tile, block, t));
    }
    if (t == 0 && p.fault == CoResidentFault::no_writer_fence) ctx.fence_global();  // too early
    ctx.sync_threads();
    if (t == 0) {
      uint32_t* counter = p.counters + tile;
      const bool fence =
          p.fault != CoResidentFault::no_writer_fence && p.fault != CoResidentFault::no_parts;
      if (fence) ctx.fence_global();
      ctx.atomic_inc_global(counter, 2 * blocks - 1);  // arrive
      if (p.fault == CoResidentFault::read_after_wait) ctx.fence_global();
      uint32_t target = blocks + (p.fault == CoResidentFault::wait_too_long);
      if (p.fault == CoResidentFault::one_waits_too_long && block == 0) target = 2 * blocks;
      ctx.wait_global_at_least(counter, target);
      if (p.fault == CoResidentFault::read_after_wait) store_f32(p.out, load_coherent_f32(parts));
      ctx.atomic_inc_global(counter, 2 * blocks - 1);  // leave
      if (p.fault != CoResidentFault::no_reader_fence) ctx.fence_global();
    }
    ctx.sync_threads();
    if (p.fault == CoResidentFault::two_rounds) {
      if (t == 0) {
        uint32_t* again = p.counters + ctx.grid_dim().y + tile;
        ctx.atomic_inc_global(again, 2 * blocks - 1);
        ctx.wait_global_at_least(again, blocks);
        ctx.atomic_inc_global(again, 2 * blocks - 1);
        ctx.fence_global();
      }
      ctx.sync_threads();
    }
    if (p.fault == CoResidentFault::stuck_after_wait && t == 0) ctx.mbarrier_wait(never, 0);
    if (t % blocks != block) return;
    float sum = load_coherent_f32(parts + t);
    for (uint32_t b = 1; b < blocks; ++b)
      sum = add_rn(sum, load_coherent_f32(parts + b * threads + t));
    store_f32(p.out + uint64_t{tile} * threads + t, sum);
  }
};

}  // namespace test_kernels
}  // namespace nvh
