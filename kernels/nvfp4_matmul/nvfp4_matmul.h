// The operator: MatMulBlockQuantizedFp4Weight on any backend.
//
//   run_matmul(backend, args, options):
//     1. describe_problem checks every argument and derives M, N, K;
//     2. select_route decides (dispatch.h), building no text;
//     3. the launch is recorded (harness/route_record.h) with route, variant,
//        reason, shape, dtype, backend and arch;
//     4. the route's runner (its row of route_table.h) runs its kernels.
#pragma once

#include <stdexcept>
#include <string>

#include "harness/backend.h"
#include "kernels/nvfp4_matmul/dispatch.h"
#include "kernels/nvfp4_matmul/nvfp4_types.h"

namespace nvfp4 {

// The route chosen cannot run on this backend (native_sm120 off sm_12x).
class RouteUnavailable : public std::runtime_error {
 public:
  RouteUnavailable(Route route, std::string missing_capability);
  Route route() const { return route_; }
  const std::string& missing_capability() const { return missing_; }

 private:
  Route route_;
  std::string missing_;
};

// Checks shapes, types and pointers; throws std::invalid_argument naming the
// argument and its value.
Problem describe_problem(const MatmulArgs& args);

// What the dispatcher is told about a backend. The host executor dispatches
// as the H200 this harness targets (h200_caps), so a problem takes the same
// route on the host as on the GPU.
Caps device_caps(const nvh::Backend& backend);

// The H200's caps as a CUDA build with sm_90a code sees them: sm_90, wgmma,
// no cuBLASLt FP4; `backend` names who decides with them (the host executor,
// replay's --dry-run).
Caps h200_caps(const std::string& backend);

// Runs the operator; returns the decision as recorded (variant included).
// Its detail is empty: explain_route (dispatch.h) gives the words.
Decision run_matmul(nvh::Backend& backend, const MatmulArgs& args, const Options& options = {});

// The prefill routes' first half alone (benchmarks time it separately):
// dequantize B into `scratch` ([N, K] of A's type) with prefill_vec8 or
// prefill_scalar. No record is made.
void run_dequant(nvh::Backend& backend, Route prefill_route, const MatmulArgs& args, void* scratch);

// prefill_fused_prepack (prefill_fused_prepack.cuh): B's codes ([N, K / 2],
// e2m1x2, K % 128 == 0, 16-byte aligned) reordered into `out` (the same
// bytes, 16-byte aligned) for prefill_fused's wgmma kernel, once per
// constant weight; pass `out` as MatmulArgs::prepacked_B. Throws naming the
// value that does not fit (K, the shape, an address).
void prepack_for_fused(nvh::Backend& backend, const TensorArg& B, int64_t K, void* out);

// Warps gemv_mma's split-K should keep busy (GemvMma::split_for): 32 per
// multiprocessor on a GPU; the host executor reports none, and any number
// does there, so it counts as 4.
int64_t gemv_mma_target_warps(int multiprocessors);

// Bytes the prefill routes need for the dequant scratch.
std::size_t scratch_bytes(const Problem& problem);

}  // namespace nvfp4
