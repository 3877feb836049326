// The prefill routes' second half: Y = A * scratch^T (+ bias), fp32
// accumulation, one rounding to the output type at the end.
//   GPU:  cuBLASLt. Without a bias, straight to fp16/bf16 ("cublaslt").
//         With a bias: the bias epilogue ("cublaslt_bias") when the chosen
//         algorithm passes a rounding probe, run once per shape: some of
//         cuBLASLt's algorithms round the product to the output type before
//         adding the bias (two roundings, caught on the H200 by the property
//         suite at M = 2, N = 7, K = 160 in bf16), others add it first, and
//         the documentation does not say which. Failing the probe (or too
//         large to probe), fp32 out, then a bias-and-round kernel
//         ("cublaslt_f32+bias_round"). If cuBLASLt has no algorithm for the
//         layout, cublasGemmEx into fp32 then bias-and-round ("gemmex_f32+bias_round").
//   host: a plain fp32 loop, k ascending, fmaf per product ("host_fp32_loop");
//         written here, not borrowed from the reference.
#pragma once

#include <cstdint>
#include <string>

#include "harness/backend.h"
#include "kernels/nvfp4_matmul/nvfp4_types.h"

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
