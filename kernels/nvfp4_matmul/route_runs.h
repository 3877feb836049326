// How each route runs (nvfp4_matmul.cc): the route table's `run` column
// (route_table.h, RouteRunner). Each takes a problem the route accepts.
#pragma once

#include "harness/backend.h"
#include "kernels/nvfp4_matmul/nvfp4_types.h"

namespace nvfp4 {

void run_empty_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                     void* scratch);
void run_gemv_mma_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                        void* scratch);
void run_gemv_scalar_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                           void* scratch);
void run_native_sm120_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                            void* scratch);
void run_prefill_fused_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                             void* scratch);
void run_prefill_vec8_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                            void* scratch);
void run_prefill_scalar_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                              void* scratch);

}  // namespace nvfp4
