// A test-only kernel of one TMA box (kernel_ctx.h: mbarrier_arrive_expect_tx,
// tma_load_2d, tma_load_2d_streaming): thread 0 sets up an mbarrier, expects the box's bytes on it
// and copies the box at (col, row) of a 2-D tensor map into shared memory;
// the block waits on the phase and writes the box out as it lies in shared
// memory (swizzled or not, zeros past the matrix), so that the GPU's layout
// and the host executor's can be compared byte for byte. `order` leaves one
// step out or gets one wrong, for the host executor's tests of its rules
// (tma_test.cc).
#pragma once

#include <array>
#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "harness/tensor_map.h"

namespace nvh {
namespace test_kernels {

enum class TmaOrder : uint8_t {
  legal,                   // expect_tx, the copy, every thread waits
  copy_then_expect,        // legal too: the copy before the arrival that expects its bytes
  legal_streaming,         // legal: as `legal`, the copy tma_load_2d_streaming (an L2 hint)
  one_waits_then_barrier,  // legal: thread 0 waits, a block barrier orders the others after it
  no_wait,                 // the threads read the box without waiting on the phase
  one_waits_no_barrier,    // thread 0 waits; the others read with no barrier after its wait
  expect_too_small,        // expect_tx 16 bytes short: the phase may complete before the box lands
  expect_too_large,        // expect_tx 16 bytes over: the phase never completes
  expect_too_large_no_wait,  // the same with nobody waiting: the block ends with the copy in flight
  second_copy_in_flight,     // two boxes into the same bytes on one phase, both in flight
  wgmma_without_wait,        // the warpgroup's wgmma reads the box (its B tile) with no wait
};

struct TmaBox {
  static constexpr uint32_t kMaxBlockThreads = 128;
  static constexpr uint32_t kMaxBoxBytes = 16384;
  // The box (1024-byte aligned: the swizzle's atom), then the mbarrier,
  // with 1024 bytes to align the first (dynamic shared memory is only
  // 16-byte aligned).
  static constexpr uint32_t kSharedBytes = kMaxBoxBytes + 8 + 1024;

  struct Params {
    TensorMap2d map;
    uint8_t* out;  // map.box_bytes() bytes: the box as it lies in shared memory
    int32_t col, row;
    TmaOrder order;
    std::array<TensorMap2d*, 1> tensor_maps() { return {&map}; }
  };

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const uint32_t tid = ctx.thread_idx().x;
    uint8_t* smem = ctx.template shared_mem<uint8_t>();
    uint8_t* box = smem + (1024 - reinterpret_cast<uintptr_t>(smem) % 1024) % 1024;
    auto* bar = reinterpret_cast<uint64_t*>(box + kMaxBoxBytes);
    const uint32_t bytes = p.map.box_bytes();
    if (tid == 0) {
      ctx.prefetch_tensor_map(p.map);
      ctx.mbarrier_init(bar, 1);
    }
    ctx.sync_threads();
    if (tid == 0) {
      uint32_t expect = bytes;
      if (p.order == TmaOrder::expect_too_small) expect -= 16;
      if (p.order == TmaOrder::expect_too_large || p.order == TmaOrder::expect_too_large_no_wait) {
        expect += 16;
      }
      if (p.order == TmaOrder::copy_then_expect) {
        ctx.tma_load_2d(box, p.map, p.col, p.row, bar);
        ctx.mbarrier_arrive_expect_tx(bar, expect);
      } else if (p.order == TmaOrder::second_copy_in_flight) {
        // Both copies before the arrival: the phase counts both.
        ctx.tma_load_2d(box, p.map, p.col, p.row, bar);
        ctx.tma_load_2d(box, p.map, p.col, p.row, bar);
        ctx.mbarrier_arrive_expect_tx(bar, 2 * expect);
      } else if (p.order == TmaOrder::legal_streaming) {
        ctx.mbarrier_arrive_expect_tx(bar, expect);
        ctx.tma_load_2d_streaming(box, p.map, p.col, p.row, bar);
      } else {
        ctx.mbarrier_arrive_expect_tx(bar, expect);
        ctx.tma_load_2d(box, p.map, p.col, p.row, bar);
      }
    }
    if (p.order == TmaOrder::expect_too_large_no_wait) return;
    if (p.order == TmaOrder::wgmma_without_wait) {
      float acc[64] = {};
      const uint32_t zeros[4] = {0, 0, 0, 0};
      ctx.wgmma_fence();
      ctx.template wgmma_m64k16<128>(acc, zeros, box, HalfKind::bf16);
      ctx.wgmma_commit();
      ctx.template wgmma_wait<0>();
      return;
    }
    const bool one_waits =
        p.order == TmaOrder::one_waits_then_barrier || p.order == TmaOrder::one_waits_no_barrier;
    if (p.order != TmaOrder::no_wait && (!one_waits || tid == 0)) ctx.mbarrier_wait(bar, 0);
    if (p.order == TmaOrder::one_waits_then_barrier) ctx.sync_threads();
    for (uint32_t at = 4 * tid; at < bytes; at += 4 * kMaxBlockThreads) {
      store_u32(p.out + at, load_generic_u32(box + at));
    }
  }
};

}  // namespace test_kernels
}  // namespace nvh
