// gemv_mma_slices_sum: the second kernel of gemv_mma's sliced layout
// (gemv_mma_slices.cuh). Each thread owns one output: it adds the slices'
// parts in slice order from +0 (a fixed order, so the bits do not depend
// on timing), restores the fast path's power of two and stores as gemv_mma
// does (bias, one rounding). Launched to overlap the first kernel's tail
// (programmatic dependent launch, as prefill_fused_sum is): every thread
// waits for that grid before any read.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"
#include "kernels/nvfp4_matmul/gemv_output.cuh"
#include "kernels/nvfp4_matmul/probes.h"

namespace nvfp4 {

struct GemvMmaSlicesSum {
  static constexpr uint32_t kMaxBlockThreads = 256;
  struct Params {
    GemvOperands out;
    const float* parts;  // [slices][M][N]
    uint32_t slices;
  };

  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void sum(Ctx& ctx, const Params& p) {
    const int64_t i = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x;
    const int64_t outputs = p.out.M * p.out.N;
    if (NVFP4_PROBE(i >= outputs)) return;
    float s = nvh::load_generic_f32(p.parts + i);
    for (uint32_t k = 1; NVFP4_PROBE(k < p.slices); ++k) {
      s = nvh::add_rn(s, nvh::load_generic_f32(p.parts + k * outputs + i));
    }
    const float g = nvh::load_generic_f32(p.out.global_scale);
    const float restore =
        NVFP4_PROBE(GemvMma::fast_g<kKind>(g)) ? GemvMma::fast_scales<kKind>(g).restore : 1.0f;
    store_gemv_output<kKind>(p.out, nvh::mul_rn(s, restore), i / p.out.N, i % p.out.N);
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    ctx.wait_prior_grid();
    if (NVFP4_PROBE(p.out.kind == nvh::HalfKind::fp16)) {
      sum<nvh::HalfKind::fp16>(ctx, p);
    } else {
      sum<nvh::HalfKind::bf16>(ctx, p);
    }
  }

  static nvh::LaunchShape shape(const Params& p) {
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>((p.out.M * p.out.N + kMaxBlockThreads - 1) / kMaxBlockThreads),
              1, 1};
    s.overlaps_prior_grid = true;
    return s;
  }
};

}  // namespace nvfp4
