// gemv_sliced: gemv_mma's kernel with each tile's K cut into `slices`
// contiguous slices, one block each (8 warps splitting the slice as the
// route splits a tile), every block's sum parked in an fp32 workspace;
// PrefillFusedSum (prefill_fused_sum.cuh) then adds the slices in a
// fixed order. Bench only (group depth): the first K split measured, one
// tile a block; the route's sliced layout (gemv_mma_slices.cuh) holds 8
// tiles a block instead. It measures what balancing the work across the multiprocessors
// would give where the tiles are few (N = 5120: 320 tiles on 132 SMs, so
// 56 SMs run three tiles and 76 two, and the last third of the kernel runs
// on 56 SMs). Not a route: it needs the workspace, and it runs only the
// path the bench times (A not pre-paired, wide scales, g in the fast
// window); run() throws elsewhere.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"

namespace nvfp4 {

struct GemvMmaSliced : GemvMma {
  struct Params : GemvMma::Params {
    uint32_t slices;  // blocks per tile, each a contiguous share of K's stages
    float* partial;   // [slices][M][N], the blocks' sums before the fast path's restore
  };
  static constexpr int kStages = kPrePairedStages;  // two: the route's best (bench group depth)

  static nvh::LaunchShape shape(const Params& p) {
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>((p.N + 15) / 16 * p.slices), 1, 1};
    s.shared_bytes = pipeline_bytes(kStages);
    s.uses_collectives = true;
    return s;
  }

  // Stages [first, end) of slice `slice`: as even as the count allows.
  NVH_HD static void slice_stages(int64_t stages, uint32_t slices, uint32_t slice, int64_t& first,
                                  int64_t& end) {
    first = stages * slice / slices;
    end = stages * (slice + 1) / slices;
  }

  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void run_sliced(Ctx& ctx, const Params& p) {
    const int64_t tile = ctx.block_idx().x / p.slices;
    const uint32_t slice = ctx.block_idx().x % p.slices;
    int64_t first = 0, end = 0;
    slice_stages(stage_count(p.K), p.slices, slice, first, end);
    const int64_t part = ctx.warp();  // 8 warps, all on this block's one tile
    const int64_t n0 = tile * 16;
    const uint32_t lane = ctx.lane();
    const int g = static_cast<int>(lane / 4), t = static_cast<int>(lane % 4);
    uint8_t* warp_stages = ctx.template shared_mem<uint8_t>() + ctx.warp() * kStages * kStageBytes;
    const bool has_work = n0 < p.N && first + part < end;
    const LoopShape shape{warp_stages,
                          static_cast<int>(first + part),
                          static_cast<int>(end - 1),
                          static_cast<int>(kWarps),
                          -1,
                          g,
                          t,
                          lane};
    LoopState<true> l{first_copy<true>(p, n0, first + part, lane),
                      nullptr,
                      static_cast<int>(first + part),
                      0,
                      {0.f, 0.f, 0.f, 0.f}};
    for (int s = 0; s < kStages - 1; ++s, l.next += kWarps, l.fill = following<kStages>(l.fill)) {
      if (has_work && l.next <= shape.last) {
        issue_stage(ctx, p, l.copy, slot(shape, l.fill), false, lane);
      }
      ctx.cp_async_commit();
    }
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    if (has_work) {
      const int64_t act_row = g < p.M ? g : p.M - 1;
      l.act =
          reinterpret_cast<const uint8_t*>(p.A + act_row * p.K + (first + part) * kStageK + 32 * t);
      stream<kKind, false, true, false, kStages>(ctx, p, shape, 0.0f, l);
      for (int i = 0; i < 4; ++i) d[i] = l.d[i];
    }
    // The parts meet in part 0 in the route's order.
    ctx.template cp_async_wait<0>();
    float* parked = reinterpret_cast<float*>(warp_stages) + lane * 4;
    for (int i = 0; i < 4; ++i) nvh::store_f32(parked + i, d[i]);
    ctx.sync_threads();
    if (part != 0 || n0 >= p.N) return;
    for (uint32_t w = 1; w < kWarps; ++w) {
      const float* other =
          reinterpret_cast<const float*>(warp_stages + w * kStages * kStageBytes) + lane * 4;
      for (int i = 0; i < 4; ++i) d[i] = nvh::add_rn(d[i], nvh::load_generic_f32(other + i));
    }
    for (int i = 0; i < 4; ++i) {
      const int64_t n = n0 + g + (i >= 2 ? 8 : 0), m = 2 * t + (i % 2);
      if (n >= p.N || m >= p.M) continue;
      nvh::store_f32(p.partial + (slice * p.M + m) * p.N + n, d[i]);
    }
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    if (p.kind == nvh::HalfKind::fp16) {
      run_sliced<nvh::HalfKind::fp16>(ctx, p);
    } else {
      run_sliced<nvh::HalfKind::bf16>(ctx, p);
    }
    ctx.launch_dependents();  // PrefillFusedSum, launched to overlap this grid's tail, may start
  }

  // The path this variant has (header comment), checked on the host before a launch.
  static void check(const Params& p) {
    if (activations_fit(p.M, p.K) || !wide_scales(p) || p.split != kWarps) {
      throw std::invalid_argument(
          "GemvMmaSliced: M = " + std::to_string(p.M) + ", K = " + std::to_string(p.K) +
          ", split = " + std::to_string(p.split) +
          ": runs only A not pre-paired, K % 256 == 0 with 16-byte aligned scales, split 8");
    }
  }
};

}  // namespace nvfp4
