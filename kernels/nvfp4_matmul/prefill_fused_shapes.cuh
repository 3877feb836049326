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

// Launches a shape's kernel. The wgmma shape is a kernel a kind
// (PrefillFusedWgmmaOf), picked here by the operands' kind, whose
// parameters add the TMA's map of A; kClusterSum (wgmma shapes) picks its
// kernel whose K slices meet in a cluster (launch_fused_cluster_sum).
template <class Fused, bool kClusterSum = false>
void launch_fused(nvh::Backend& backend, const nvh::LaunchShape& shape,
                  const PrefillFusedParams& params) {
  if constexpr (kIsWgmmaShape<Fused>) {
    constexpr int kTiles = Fused::kATiles;
    const PrefillFusedWgmmaParams with_map = Fused::with_a_map(params);  // the TMA's map of A
    if (params.kind == nvh::HalfKind::fp16) {
      nvh::launch<PrefillFusedWgmmaOf<nvh::HalfKind::fp16, kTiles, kClusterSum>>(backend, shape,
                                                                                 with_map);
    } else {
      nvh::launch<PrefillFusedWgmmaOf<nvh::HalfKind::bf16, kTiles, kClusterSum>>(backend, shape,
                                                                                 with_map);
    }
  } else {
    static_assert(!kClusterSum, "the slices meet in a cluster in the wgmma kernel only");
    nvh::launch<Fused>(backend, shape, params);
  }
}

// A wgmma shape's K split whose slices meet in a cluster
// (FusedPlan::cluster_sum): one launch in clusters of the k_slices blocks of
// a tile (grid.z), which add their sums in the cluster's shared memory and
// write Y; no parts, no prefill_fused_sum.
template <class Fused>
void launch_fused_cluster_sum(nvh::Backend& backend, const PrefillFusedParams& params) {
  if (params.k_slices != static_cast<int32_t>(Fused::kClusterSlices)) {
    throw std::invalid_argument(
        "launch_fused_cluster_sum: k_slices = " + std::to_string(params.k_slices) +
        ", where a cluster adds " + std::to_string(Fused::kClusterSlices));
  }
  nvh::LaunchShape shape = Fused::shape(params);
  shape.cluster = {1, 1, shape.grid.z};
  launch_fused<Fused, true>(backend, shape, params);
}

}  // namespace nvfp4
