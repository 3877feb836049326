// launch_floor: a kernel that does nothing, timed exactly as the routes are
// (its own pair of events, behind the GPU hold). Its median is the part of
// every row of the bench table that no kernel can remove: launch, the ramp
// of the grid, the events themselves.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"

namespace nvfp4 {

struct LaunchFloor {
  static constexpr uint32_t kMaxBlockThreads = 32;
  struct Params {
    int unused;
  };

  template <class Ctx>
  NVH_HD static void body(Ctx&, const Params&) {}

  static nvh::LaunchShape shape() {
    nvh::LaunchShape s;
    s.block = {32, 1, 1};
    s.grid = {1, 1, 1};
    return s;
  }
};

}  // namespace nvfp4
