// prefill_fused's kernels by the plan's FusedShape (prefill_fused_plan.h):
// the mma.sync block shapes (prefill_fused.cuh) and the wgmma kernel
// (prefill_fused_wgmma.cuh).
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

#include "harness/launch.h"
#include "kernels/nvfp4_matmul/prefill_fused.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_plan.h"
#include "kernels/nvfp4_matmul/prefill_fused_wgmma.cuh"

namespace nvfp4 {

// The type a plan's FusedShape names, as f's argument (a tag: its `type`),
// so that every place that needs the shape's kernel type (to launch it, to
// read its sizes) switches over FusedShape here, once.
template <class Kernel>
struct FusedShapeTag {
  using type = Kernel;
};
template <class F>
decltype(auto) with_fused_shape(FusedShape shape, F&& f) {
  switch (shape) {
    case FusedShape::m16n64:
      return f(FusedShapeTag<PrefillFusedM16N64>{});
    case FusedShape::m32n128:
      return f(FusedShapeTag<PrefillFusedM32N128>{});
    case FusedShape::m64n128:
      return f(FusedShapeTag<PrefillFusedM64N128>{});
    case FusedShape::w128n128:
      return f(FusedShapeTag<PrefillFusedWgmma>{});
    case FusedShape::w256n128:
      return f(FusedShapeTag<PrefillFusedWgmmaTiles<2>>{});
    default:
      return f(FusedShapeTag<PrefillFusedM128N128>{});
  }
}

template <class F>
inline constexpr bool kIsWgmmaShape = false;
template <int kATiles>
inline constexpr bool kIsWgmmaShape<PrefillFusedWgmmaTiles<kATiles>> = true;

// A wgmma shape's kernel of the operands' kind (PrefillFusedWgmmaOf),
// whose parameters add the TMA's maps.
template <class Fused, int kClusterSlices, bool kLetsDependentsStart>
void launch_wgmma_of_kind(nvh::Backend& backend, const nvh::LaunchShape& shape,
                          const PrefillFusedParams& params) {
  constexpr int kTiles = Fused::kATiles;
  const PrefillFusedWgmmaParams with_map = Fused::with_a_map(params);  // the TMA's map of A
  if (params.kind == nvh::HalfKind::fp16) {
    nvh::launch<
        PrefillFusedWgmmaOf<nvh::HalfKind::fp16, kTiles, kClusterSlices, kLetsDependentsStart>>(
        backend, shape, with_map);
  } else {
    nvh::launch<
        PrefillFusedWgmmaOf<nvh::HalfKind::bf16, kTiles, kClusterSlices, kLetsDependentsStart>>(
        backend, shape, with_map);
  }
}

// Launches a shape's kernel. The wgmma shape is a kernel a kind, picked
// here; kClusterSlices (wgmma shapes) picks its kernel whose K slices meet
// in clusters of that many blocks (launch_fused_cluster_sum), and
// shape.lets_dependents_overlap w256n128's kernel that lets a clustered
// tail's launch start early (its whole rounds: run_prefill_fused_shape).
template <class Fused, int kClusterSlices = 0>
void launch_fused(nvh::Backend& backend, const nvh::LaunchShape& shape,
                  const PrefillFusedParams& params) {
  if constexpr (kIsWgmmaShape<Fused>) {
    if (!shape.lets_dependents_overlap) {
      launch_wgmma_of_kind<Fused, kClusterSlices, false>(backend, shape, params);
      return;
    }
    if constexpr (kClusterSlices == 0 && Fused::kATiles == 2) {
      launch_wgmma_of_kind<Fused, 0, true>(backend, shape, params);
      return;
    }
  } else {
    static_assert(kClusterSlices == 0, "the slices meet in a cluster in the wgmma kernel only");
    if (!shape.lets_dependents_overlap) {
      nvh::launch<Fused>(backend, shape, params);
      return;
    }
  }
  throw std::invalid_argument(
      "launch_fused: lets_dependents_overlap, where only w256n128's one-slice kernel lets the "
      "launch after it start early (a tail split's whole rounds)");
}

// A wgmma shape's K split whose slices meet in a cluster
// (FusedPlan::cluster_sum): one launch over the params' columns in clusters
// of the k_slices blocks of a tile (grid.z), which add their sums in the
// cluster's shared memory and write Y; no parts, no prefill_fused_sum.
// `after_rounds`: a tail split's, launched to overlap the whole rounds'
// launch before it (independent_of_prior_grid: it touches none of the
// columns those write, and its blocks wait for that grid before they exit).
template <class Fused>
void launch_fused_cluster_sum(nvh::Backend& backend, const PrefillFusedParams& params,
                              bool after_rounds = false) {
  if (!Fused::adds_in_a_cluster(params.k_slices)) {
    throw std::invalid_argument(
        "launch_fused_cluster_sum: k_slices = " + std::to_string(params.k_slices) +
        ", which this shape's (" + std::to_string(Fused::kTileRows) +
        " rows of A a block) clusters do not add");
  }
  nvh::LaunchShape shape = Fused::shape(params);
  shape.cluster = {1, 1, shape.grid.z};
  shape.overlaps_prior_grid = after_rounds;
  shape.independent_of_prior_grid = after_rounds;
  if (params.k_slices == 2) {
    launch_fused<Fused, 2>(backend, shape, params);
  } else if constexpr (Fused::adds_in_a_cluster(4)) {
    launch_fused<Fused, 4>(backend, shape, params);
  }
}

}  // namespace nvfp4
