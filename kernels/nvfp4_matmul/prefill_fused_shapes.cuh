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

// A wgmma shape's kernel of the operands' kind and W's order
// (PrefillFusedWgmmaOf), whose parameters add the TMA's maps.
template <class Fused, int kClusterSlices, FusedOverlap kOverlap, nvh::HalfKind kKind>
void launch_wgmma_of_order(nvh::Backend& backend, const nvh::LaunchShape& shape,
                           const PrefillFusedWgmmaParams& params) {
  constexpr int kTiles = Fused::kATiles;
  if (params.prepacked) {
    nvh::launch<PrefillFusedWgmmaOf<kKind, true, kTiles, kClusterSlices, kOverlap>>(backend, shape,
                                                                                    params);
  } else {
    nvh::launch<PrefillFusedWgmmaOf<kKind, false, kTiles, kClusterSlices, kOverlap>>(backend, shape,
                                                                                     params);
  }
}
template <class Fused, int kClusterSlices, FusedOverlap kOverlap>
void launch_wgmma_of_kind(nvh::Backend& backend, const nvh::LaunchShape& shape,
                          const PrefillFusedParams& params) {
  const PrefillFusedWgmmaParams with_map = Fused::with_a_map(params);  // the TMA's map of A
  if (params.kind == nvh::HalfKind::fp16) {
    launch_wgmma_of_order<Fused, kClusterSlices, kOverlap, nvh::HalfKind::fp16>(backend, shape,
                                                                                with_map);
  } else {
    launch_wgmma_of_order<Fused, kClusterSlices, kOverlap, nvh::HalfKind::bf16>(backend, shape,
                                                                                with_map);
  }
}

// Whether a wgmma shape has a kernel for that overlap role (leads or
// follows) and cluster size: the one tail that overlaps the launch before it
// is w256n128's clustered tail after its one-slice rounds
// (prefill_fused_tail_overlaps), and every kernel is built for the GPU
// (launch_cuda.cu), so the pairs are few.
template <class Fused, int kClusterSlices, FusedOverlap kOverlap>
inline constexpr bool kHasOverlapKernel = Fused::kATiles == 2 &&
                                          kClusterSlices == (kOverlap == FusedOverlap::leads
                                                                 ? 0
                                                                 : kFusedTailClusterSlices);

// The overlap role a launch shape asks for (FusedOverlap), and the flags
// that ask for one.
inline FusedOverlap overlap_of(const nvh::LaunchShape& shape) {
  if (shape.lets_dependents_overlap) return FusedOverlap::leads;
  if (shape.independent_of_prior_grid) return FusedOverlap::follows;
  return FusedOverlap::none;
}
inline void set_overlap(nvh::LaunchShape& shape, FusedOverlap role) {
  shape.lets_dependents_overlap = role == FusedOverlap::leads;
  shape.overlaps_prior_grid = shape.independent_of_prior_grid = role == FusedOverlap::follows;
}

// Launches a shape's kernel. The wgmma shape is a kernel a kind, picked
// here; kClusterSlices (wgmma shapes) picks its kernel whose K slices meet
// in clusters of that many blocks (launch_fused_cluster_sum), and the
// shape's overlap flags its kernel's part in a tail split that overlaps
// (lets_dependents_overlap: leads; independent_of_prior_grid: follows).
template <class Fused, int kClusterSlices = 0>
void launch_fused(nvh::Backend& backend, const nvh::LaunchShape& shape,
                  const PrefillFusedParams& params) {
  const FusedOverlap overlap = overlap_of(shape);
  if constexpr (kIsWgmmaShape<Fused>) {
    if (shape.lets_dependents_overlap && shape.independent_of_prior_grid) {
      throw std::invalid_argument(
          "launch_fused: a launch both leads a tail and is one (lets_dependents_overlap and "
          "independent_of_prior_grid)");
    }
    if (overlap == FusedOverlap::none) {
      launch_wgmma_of_kind<Fused, kClusterSlices, FusedOverlap::none>(backend, shape, params);
      return;
    }
    if (overlap == FusedOverlap::leads) {
      if constexpr (kHasOverlapKernel<Fused, kClusterSlices, FusedOverlap::leads>) {
        launch_wgmma_of_kind<Fused, kClusterSlices, FusedOverlap::leads>(backend, shape, params);
        return;
      }
    } else if constexpr (kHasOverlapKernel<Fused, kClusterSlices, FusedOverlap::follows>) {
      launch_wgmma_of_kind<Fused, kClusterSlices, FusedOverlap::follows>(backend, shape, params);
      return;
    }
  } else {
    static_assert(kClusterSlices == 0, "the slices meet in a cluster in the wgmma kernel only");
    if (overlap == FusedOverlap::none) {
      nvh::launch<Fused>(backend, shape, params);
      return;
    }
  }
  throw std::invalid_argument(
      "launch_fused: a tail split that overlaps the launch before it, which only w256n128's "
      "kernels take (one slice before the tail, clusters of 4 as the tail)");
}

// launch_fused_cluster_sum's wgmma shapes.
template <class Fused>
void launch_wgmma_cluster_sum(nvh::Backend& backend, const PrefillFusedParams& params,
                              FusedOverlap overlap) {
  if (!Fused::adds_in_a_cluster(params.k_slices)) {
    throw std::invalid_argument(
        "launch_fused_cluster_sum: k_slices = " + std::to_string(params.k_slices) +
        ", which this shape's (" + std::to_string(Fused::kTileRows) +
        " rows of A a block) clusters do not add");
  }
  nvh::LaunchShape shape = Fused::shape(params);
  shape.cluster = {1, 1, shape.grid.z};
  set_overlap(shape, overlap);
  if (params.k_slices == 2) {
    launch_fused<Fused, 2>(backend, shape, params);
  } else if constexpr (Fused::adds_in_a_cluster(4)) {
    launch_fused<Fused, 4>(backend, shape, params);
  }
}

// A wgmma shape's K split whose slices meet in a cluster
// (FusedPlan::cluster_sum, tail_cluster_sum): one launch over the params'
// columns in clusters of the k_slices blocks of a tile (grid.z), which add
// their sums in the cluster's shared memory and write Y; no parts, no
// prefill_fused_sum. `overlap`: its part in a tail split whose tail overlaps
// the launch before it (leads: the launch before the tail; follows: the
// tail, which touches none of the columns that launch writes). The mma.sync
// shapes have no clusters: refused.
template <class Fused>
void launch_fused_cluster_sum(nvh::Backend& backend, const PrefillFusedParams& params,
                              FusedOverlap overlap = FusedOverlap::none) {
  if constexpr (!kIsWgmmaShape<Fused>) {
    throw std::invalid_argument("launch_fused_cluster_sum: the mma.sync block of " +
                                std::to_string(Fused::kTileRows) +
                                " rows of A adds no slices in clusters");
  } else {
    launch_wgmma_cluster_sum<Fused>(backend, params, overlap);
  }
}

}  // namespace nvfp4
