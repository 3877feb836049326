// gemv_depth: gemv_mma's kernel with kStagesA pipeline stages per warp where
// A is not pre-paired (the route runs GemvMma::kStagesFromA), so the bench
// can time the depths side by side on the shapes that take that path
// (group depth).
#pragma once

#include "harness/kernel_ctx.h"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"

namespace nvfp4 {

template <int kStagesA>
struct GemvMmaDepth : GemvMma {
  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    GemvMma::body_at<kStagesA>(ctx, p);
  }
  static nvh::LaunchShape shape(const Params& p) { return GemvMma::shape(p, kStagesA); }
};

}  // namespace nvfp4
