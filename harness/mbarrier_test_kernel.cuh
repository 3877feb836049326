// A test-only kernel of a producer warp and a consumer warp that pass stages
// through a ring of two shared-memory slots with mbarriers (kernel_ctx.h:
// mbarrier_init / mbarrier_arrive / mbarrier_wait), the pattern of a
// warp-specialized pipeline: the producer copies stage s with cp.async,
// waits for stage s - 1's copies and arrives on that slot's "full" barrier;
// (or, in order copy_arrive, arrives through cp_async_mbarrier_arrive as
// soon as it has issued stage s, the barrier arriving once they land);
// the consumer waits on it, reads a neighbour's word of the stage and
// arrives on the slot's "empty" barrier, which the producer waits on before
// it copies into the slot again. In order relay a third warp reads each
// stage too, after waiting on a "relay" barrier the consumer arrives on once
// it has read (ordered after the producer's copies through the consumer:
// legal), and the slot's "empty" barrier waits for both readers. `order`
// leaves one step out, for the host executor's tests of its rules
// (mbarrier_test.cc).
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"

namespace nvh {
namespace test_kernels {

enum class RingOrder : uint8_t {
  legal,
  copy_arrive,            // legal too: the producer arrives through cp_async_mbarrier_arrive
                          // (the barrier arrives once its copies land) instead of waiting
  no_full_wait,           // the consumer reads a stage without waiting on its "full" barrier
  arrive_before_wait,     // the producer arrives on "full" before the wait that lands its copies
  count_too_high,         // "full" expects 33 arrivals where 32 come: the consumer waits forever
  no_barrier_after_init,  // the barriers are used with no block barrier after their init
  relay,                  // legal: a third warp reads each stage after the consumer, through
                          // a barrier the consumer arrives on (96 threads)
  relay_no_wait,          // the third warp reads without waiting on the relay barrier
  one_lane_waits,         // legal: the consumer's lane 0 waits on "full", then a sync_warp
                          // orders the other lanes after it
  no_empty_wait,          // the producer copies into a slot without waiting on its "empty"
                          // barrier: the copy may land before the consumer's read
};

// Whether the order has the third warp (96 threads; 64 otherwise).
NVH_HD inline bool has_relay(RingOrder order) {
  return order == RingOrder::relay || order == RingOrder::relay_no_wait;
}

struct StageRing {
  static constexpr uint32_t kStages = 4, kSlots = 2, kWords = 32;
  struct Params {
    const uint32_t* src;  // kStages x kWords words
    uint32_t* out;        // kWords words: the consumer lane's sum over the stages
    RingOrder order;
    uint32_t* relay_out;  // kWords words, the relay lane's sum (orders with the third warp)
  };
  static constexpr uint32_t kMaxBlockThreads = 96;
  // The slots, then the full, empty and relay barriers (8-byte aligned: 256
  // bytes in).
  static constexpr uint32_t kSharedBytes = kSlots * kWords * 4 + 3 * kSlots * 8;

  // The word consumer lane `lane` reads of stage `stage`: its neighbour's.
  NVH_HD static uint32_t read_index(uint32_t lane) { return (lane + 1) % kWords; }

  template <class Ctx>
  NVH_HD static void produce(Ctx& ctx, const Params& p, uint32_t* slots, uint64_t* full,
                             uint64_t* empty, uint32_t lane) {
    for (uint32_t s = 0; s < kStages; ++s) {
      const uint32_t slot = s % kSlots;
      if (s >= kSlots && p.order != RingOrder::no_empty_wait) {
        ctx.mbarrier_wait(empty + slot, (s / kSlots - 1) % 2);
      }
      ctx.cp_async4(slots + slot * kWords + lane, p.src + s * kWords + lane);
      if (p.order == RingOrder::copy_arrive) {
        ctx.cp_async_mbarrier_arrive(full + slot);
        continue;
      }
      ctx.cp_async_commit();
      if (s == 0) continue;
      if (p.order == RingOrder::arrive_before_wait) {
        ctx.mbarrier_arrive(full + (s - 1) % kSlots);
        ctx.template cp_async_wait<1>();
      } else {
        ctx.template cp_async_wait<1>();  // stage s - 1 has landed
        ctx.mbarrier_arrive(full + (s - 1) % kSlots);
      }
    }
    if (p.order == RingOrder::copy_arrive) return;
    ctx.template cp_async_wait<0>();
    ctx.mbarrier_arrive(full + (kStages - 1) % kSlots);
  }

  template <class Ctx>
  NVH_HD static void consume(Ctx& ctx, const Params& p, const uint32_t* slots, uint64_t* full,
                             uint64_t* empty, uint64_t* relay, uint32_t lane) {
    uint32_t sum = 0;
    for (uint32_t s = 0; s < kStages; ++s) {
      const uint32_t slot = s % kSlots;
      if (p.order == RingOrder::one_lane_waits) {
        if (lane == 0) ctx.mbarrier_wait(full + slot, (s / kSlots) % 2);
        ctx.sync_warp();
      } else if (p.order != RingOrder::no_full_wait) {
        ctx.mbarrier_wait(full + slot, (s / kSlots) % 2);
      }
      sum += load_generic_u32(slots + slot * kWords + read_index(lane));
      if (has_relay(p.order)) ctx.mbarrier_arrive(relay + slot);
      ctx.mbarrier_arrive(empty + slot);
    }
    store_u32(p.out + lane, sum);
  }

  // The third warp: each stage after the consumer has read it.
  template <class Ctx>
  NVH_HD static void relay_read(Ctx& ctx, const Params& p, const uint32_t* slots, uint64_t* empty,
                                uint64_t* relay, uint32_t lane) {
    uint32_t sum = 0;
    for (uint32_t s = 0; s < kStages; ++s) {
      const uint32_t slot = s % kSlots;
      if (p.order == RingOrder::relay) ctx.mbarrier_wait(relay + slot, (s / kSlots) % 2);
      sum += load_generic_u32(slots + slot * kWords + read_index(lane));
      ctx.mbarrier_arrive(empty + slot);
    }
    store_u32(p.relay_out + lane, sum);
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const uint32_t t = ctx.thread_idx().x;
    uint32_t* slots = ctx.template shared_mem<uint32_t>();
    uint64_t* full = reinterpret_cast<uint64_t*>(slots + kSlots * kWords);
    uint64_t* empty = full + kSlots;
    uint64_t* relay = empty + kSlots;
    if (t == 0) {
      for (uint32_t i = 0; i < kSlots; ++i) {
        ctx.mbarrier_init(full + i, p.order == RingOrder::count_too_high ? 33 : 32);
        ctx.mbarrier_init(empty + i, has_relay(p.order) ? 64 : 32);
        ctx.mbarrier_init(relay + i, 32);
      }
    }
    if (p.order != RingOrder::no_barrier_after_init) ctx.sync_threads();
    if (t < 32) {
      produce(ctx, p, slots, full, empty, t);
    } else if (t < 64) {
      consume(ctx, p, slots, full, empty, relay, t - 32);
    } else {
      relay_read(ctx, p, slots, empty, relay, t - 64);
    }
  }
};

}  // namespace test_kernels
}  // namespace nvh
