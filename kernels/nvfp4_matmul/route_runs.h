// How each route runs (nvfp4_matmul.cc): the route table's `run` column
// (route_table.h, RouteRunner). Each takes a problem the route accepts.
#pragma once

#include <cstdint>

#include "harness/backend.h"
#include "kernels/nvfp4_matmul/gemv_output.cuh"
#include "kernels/nvfp4_matmul/nvfp4_types.h"
#include "kernels/nvfp4_matmul/prefill_fused_plan.h"

namespace nvfp4 {

void run_empty_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                     const Caps& caps, void* scratch);
void run_gemv_mma_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                        const Caps& caps, void* scratch);
void run_gemv_scalar_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                           const Caps& caps, void* scratch);
void run_native_sm120_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                            const Caps& caps, void* scratch);
void run_prefill_fused_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                             const Caps& caps, void* scratch);
void run_prefill_vec8_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                            const Caps& caps, void* scratch);
void run_prefill_scalar_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                              const Caps& caps, void* scratch);

// prefill_fused as `plan` says (the route runs its plan, prefill_fused_plan;
// tests and the bench others by hand): its launches, with the parts in
// `scratch` where there is one, else in a buffer of its own.
void run_prefill_fused_plan(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                            const FusedPlan& plan, void* scratch);

// What the GEMV-shaped kernels read and write, from a call's arguments.
GemvOperands gemv_operands(const MatmulArgs& args, const Problem& problem);

// The sliced GEMV (gemv_mma_slices.cuh) over `slices` slices of K, one
// group of A's rows for M <= 8 (gemv_mma), two above (prefill_fused's
// GEMV-shaped path): its parts in the backend's workspace, then their sum.
// The routes run it where their plans say; the bench at other counts too.
void run_gemv_slices(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                     uint32_t slices);

}  // namespace nvfp4
