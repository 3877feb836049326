// A test-only kernel for cp_async16_or_zero (kernel_ctx.h): 32 threads each
// copy 16 bytes of `src` into shared memory, every third one with read
// false (16 zero bytes instead), then write shared memory to `out`, so
// that cp_async_test.cc compares both backends with what the PTX ISA says
// of cp.async's src-size (the bytes past it are zero-filled).
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"

namespace nvh {
namespace test_kernels {

struct CopyOrZero {
  struct Params {
    const uint32_t* src;  // 32 x 4 words
    uint32_t* out;        // 32 x 4 words
  };
  static constexpr uint32_t kMaxBlockThreads = 32;

  NVH_HD static bool reads(uint32_t thread) { return thread % 3 != 0; }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const uint32_t t = ctx.thread_idx().x;
    uint32_t* slots = ctx.template shared_mem<uint32_t>();
    ctx.cp_async16_or_zero(slots + 4 * t, p.src + 4 * t, reads(t));
    ctx.cp_async_commit();
    ctx.template cp_async_wait<0>();
    store_u32x4(p.out + 4 * t, load_generic_u32x4(slots + 4 * t));
  }
};

}  // namespace test_kernels
}  // namespace nvh
