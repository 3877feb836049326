// The prefill routes' second half: Y = A * scratch^T (+ bias), fp32
// accumulation, one rounding to the output type at the end.
//   GPU:  cuBLASLt with the bias fused as an epilogue ("cublaslt_bias" /
//         "cublaslt"); if cuBLASLt offers no algorithm for the layout,
//         cublasGemmEx into fp32 and a bias-and-round kernel ("gemmex_f32+bias_round").
//   host: a plain fp32 loop, k ascending, fmaf per product ("host_fp32_loop");
//         written here, not borrowed from the reference.
#pragma once

#include <cstdint>
#include <string>

#include "harness/backend.h"
#include "kernels/nvfp4_types.h"

namespace nvfp4 {

struct GemmStepArgs {
  const void* A;     // [M, K]
  const void* W;     // [N, K]: the dequantized scratch
  const void* bias;  // [N] or null
  void* Y;           // [M, N]
  int64_t M, N, K;
  DType dtype;
};

// What run_gemm_step will run for these arguments on this backend.
std::string gemm_step_variant(nvh::Backend& backend, const GemmStepArgs& args);
void run_gemm_step(nvh::Backend& backend, const GemmStepArgs& args);

// The host loop on its own (the host backend's GEMM step).
void run_gemm_step_host(const GemmStepArgs& args);

#if defined(NVH_HAVE_CUDA)
std::string gemm_step_variant_cuda(nvh::Backend& backend, const GemmStepArgs& args);
void run_gemm_step_cuda(nvh::Backend& backend, const GemmStepArgs& args);
#endif

}  // namespace nvfp4
