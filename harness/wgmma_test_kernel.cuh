// A test-only kernel for the warpgroup mma (kernel_ctx.h: wgmma_fence,
// wgmma_m64k16<N>, wgmma_commit, wgmma_wait, fence_proxy_async). One
// warpgroup writes a 64 k x N column B tile into shared memory in the
// 128-byte-swizzled layout (device_ctx.cuh), makes it visible to the async
// proxy, builds A (64 rows x 64 k) as each warp's m16n8k16 fragments and
// issues four wgmmas (16 k each) as one group, then stores D = A B. Every
// value is a small integer, so D is exact on every backend and in both
// 16-bit kinds. `fault` breaks one of the rules the host executor enforces
// (host_executor.h), once, for the tests that check it is caught.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"

namespace nvh {
namespace test_kernels {

enum class WgmmaFault : uint8_t {
  none,
  no_wgmma_fence,          // the wgmmas issued with no wgmma_fence before them
  a_changed_in_flight,     // thread 5 changes an A register before the wait
  acc_changed_in_flight,   // thread 6 writes an accumulator before the wait
  b_written_in_flight,     // thread 7 writes B[0][0] before the wait
  b_misaligned,            // the B tile 16 bytes past its 1024-byte atom
  exit_in_flight,          // no wgmma_wait
  no_proxy_fence,          // the B tile written with no fence_proxy_async
  no_barrier_after_fence,  // fenced, but no barrier before the wgmmas
  // Legal: the tile handed over through an mbarrier (every thread arrives
  // after its stores and waits on the phase), then the reader's fence.
  handed_over,
  handed_over_no_fence,  // the same without the fence after the wait
  // Legal: each thread fences its stores, then arrives; the readers wait
  // on the phase and need no fence of their own.
  fenced_then_handed_over,
  fenced_handed_over_no_wait,    // the same with no wait: no reader is ordered after the fences
  handed_over_fence_before_wait  // the fence between the arrive and the wait, not after the wait
};

// kColsArg: wgmma's N, 128 (the faults' tile) or 256.
template <int kColsArg = 128>
struct WgmmaTileOf {
  using Fault = WgmmaFault;
  struct Params {
    float* out;  // [64 rows][128 columns]
    HalfKind kind;
    Fault fault;
  };
  static constexpr uint32_t kMaxBlockThreads = 128;
  static constexpr int kRows = 64, kCols = kColsArg, kK = 64;
  // The tile (kCols rows of 128 bytes), 1024 bytes to align it, and an
  // mbarrier after it.
  static constexpr uint32_t kSharedBytes = kCols * 128 + 1024 + 8;

  // Small integers, so that every product and sum is exact; both depend on
  // k, so a k order mixed up anywhere changes D.
  NVH_HD static float a_value(int row, int k) { return float((row * 7 + k * 3 + k / 8) % 9 - 4); }
  NVH_HD static float b_value(int k, int col) {
    return float((col * 5 + k * 11 + col / 8) % 7 - 3);
  }

  static LaunchShape shape() {
    LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.shared_bytes = kSharedBytes;
    s.uses_collectives = true;
    s.reads_shared_async = true;
    return s;
  }

  // Column col's 16-byte chunk of k / 8 in its 128-byte row, swizzled.
  NVH_HD static uint32_t b_offset(int k, int col) {
    return uint32_t(col) * 128 + ((uint32_t(k / 8) ^ uint32_t(col % 8)) * 16) + 2 * uint32_t(k % 8);
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const auto base = reinterpret_cast<uintptr_t>(ctx.template shared_mem<uint8_t>());
    uint8_t* tile = reinterpret_cast<uint8_t*>((base + 1023) / 1024 * 1024);
    const uint32_t tid = ctx.thread_idx().x;
    const bool handed = p.fault == Fault::handed_over || p.fault == Fault::handed_over_no_fence ||
                        p.fault == Fault::fenced_then_handed_over ||
                        p.fault == Fault::fenced_handed_over_no_wait ||
                        p.fault == Fault::handed_over_fence_before_wait;
    const bool fence_first =
        p.fault == Fault::fenced_then_handed_over || p.fault == Fault::fenced_handed_over_no_wait;
    auto* bar = reinterpret_cast<uint64_t*>(tile + kCols * 128);
    if (handed) {
      if (tid == 0) ctx.mbarrier_init(bar, kMaxBlockThreads);
      ctx.sync_threads();  // the init, seen by every thread
    }
    for (uint32_t e = tid; e < kCols * kK; e += kMaxBlockThreads) {
      const int col = int(e / kK), k = int(e % kK);
      const uint32_t both = pack_half2_rn(b_value(k, col), 0.0f, p.kind);
      store_u16(reinterpret_cast<uint16_t*>(tile + b_offset(k, col)), uint16_t(both));
    }
    if (handed) {
      if (fence_first) ctx.fence_proxy_async();
      ctx.mbarrier_arrive(bar);
      if (p.fault == Fault::handed_over_fence_before_wait) ctx.fence_proxy_async();
      if (p.fault != Fault::fenced_handed_over_no_wait) ctx.mbarrier_wait(bar, 0);
      if (p.fault == Fault::handed_over) ctx.fence_proxy_async();
    } else {
      if (p.fault != Fault::no_proxy_fence) ctx.fence_proxy_async();
      if (p.fault != Fault::no_barrier_after_fence) ctx.sync_threads();
    }

    // Lane (g, t) of warp w: rows 16w + g and + 8, k 2t, 2t + 1 and + 8.
    const int warp = int(tid / 32), g = int(tid % 32) / 4, t = int(tid % 4);
    uint32_t a[4][4];
    for (int s = 0; s < 4; ++s) {
      for (int r = 0; r < 4; ++r) {
        const int row = 16 * warp + g + 8 * (r % 2), k = 16 * s + 2 * t + 8 * (r / 2);
        a[s][r] = pack_half2_rn(a_value(row, k), a_value(row, k + 1), p.kind);
      }
    }
    float acc[kCols / 2];
    for (float& x : acc) x = 0.0f;
    if (p.fault != Fault::no_wgmma_fence) ctx.wgmma_fence();
    const uint32_t skew = p.fault == Fault::b_misaligned ? 16 : 0;
    for (int s = 0; s < 4; ++s)
      ctx.template wgmma_m64k16<kCols>(acc, a[s], tile + skew + 32 * s, p.kind);
    ctx.wgmma_commit();
    if (p.fault == Fault::a_changed_in_flight && tid == 5) a[2][1] ^= 1u;
    if (p.fault == Fault::acc_changed_in_flight && tid == 6) acc[3] = 1.0f;
    if (p.fault == Fault::b_written_in_flight && tid == 7)
      store_u16(reinterpret_cast<uint16_t*>(tile + b_offset(0, 0)), 0);
    if (p.fault == Fault::exit_in_flight) return;
    ctx.template wgmma_wait<0>();

    // Accumulator i: row 16w + g + 8 ((i % 4) >= 2), column 8 (i / 4) + 2t + i % 2.
    for (int i = 0; i < kCols / 2; ++i) {
      const int row = 16 * warp + g + ((i % 4) >= 2 ? 8 : 0), col = 8 * (i / 4) + 2 * t + i % 2;
      store_f32(p.out + row * kCols + col, acc[i]);
    }
  }
};
using WgmmaTile = WgmmaTileOf<128>;

}  // namespace test_kernels
}  // namespace nvh
