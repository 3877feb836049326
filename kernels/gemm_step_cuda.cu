// The GPU GEMM step: cuBLASLt, fp32 accumulation, one rounding after the bias
// (gemm_step.h says which variant runs when, and why).
//
// cuBLAS is column-major. Y [M, N] row-major is Yc = Y^T, an [N, M]
// column-major matrix: Yc = W * A^T, where W [N, K] row-major is a
// column-major [K, N] matrix used transposed, and A [M, K] row-major is a
// column-major [K, M] matrix used as is. The bias is a per-row vector of Yc.
#include <map>
#include <mutex>
#include <tuple>

#include "harness/backend_cuda.h"
#include "harness/launch.h"
#include "kernels/bias_round.cuh"
#include "kernels/gemm_step.h"

namespace nvfp4 {
namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;

enum class Output { direct, bias_epilogue, f32_then_bias_round };

Output output_of(const GemmStepArgs& g) {
  if (!g.bias) return Output::direct;
  return g.dtype == DType::fp16 ? Output::bias_epilogue : Output::f32_then_bias_round;
}

cudaDataType_t cuda_type(DType t) { return t == DType::fp16 ? CUDA_R_16F : CUDA_R_16BF; }


// Descriptors and the chosen algorithm for one problem; built once, reused.
struct LtPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t w = nullptr, a = nullptr, y = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool has_algo = false;
};

using PlanKey = std::tuple<int, int64_t, int64_t, int64_t, int, int, uint32_t, uint32_t, uint32_t>;

// Where the product goes: Y itself, or the fp32 accumulator slice in the workspace.
void* product_target(nvh::CudaBackend& gpu, const GemmStepArgs& g) {
  if (output_of(g) != Output::f32_then_bias_round) return g.Y;
  const std::size_t acc_bytes = static_cast<std::size_t>(g.M * g.N) * sizeof(float);
  return static_cast<char*>(gpu.workspace(kWorkspaceBytes + acc_bytes)) + kWorkspaceBytes;
}

PlanKey key_of(const nvh::CudaBackend& gpu, const GemmStepArgs& g, const void* target) {
  return {gpu.device(), g.M, g.N, g.K, static_cast<int>(g.dtype), static_cast<int>(output_of(g)),
          nvh::address_alignment(g.A), nvh::address_alignment(g.W), nvh::address_alignment(target)};
}

void set_alignment_prefs(cublasLtMatmulPreference_t pref, const GemmStepArgs& g, const void* target) {
  const uint32_t a = nvh::address_alignment(g.W), b = nvh::address_alignment(g.A), c = nvh::address_alignment(target);
  NVH_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &a, sizeof a));
  NVH_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &b, sizeof b));
  NVH_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &c, sizeof c));
  NVH_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &c, sizeof c));
}

LtPlan build_plan(nvh::CudaBackend& gpu, const GemmStepArgs& g, const void* target) {
  LtPlan plan;
  const cudaDataType_t t = cuda_type(g.dtype);
  const Output out = output_of(g);
  NVH_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
  NVH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose));
  NVH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep));
  if (out == Output::bias_epilogue) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    NVH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue));
    NVH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &t, sizeof t));
  }
  NVH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.w, t, g.K, g.N, g.K));
  NVH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.a, t, g.K, g.M, g.K));
  if (out == Output::f32_then_bias_round) {
    NVH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.y, CUDA_R_32F, g.N, g.M, g.N));
  } else {
    NVH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.y, t, g.N, g.M, g.N));
  }

  cublasLtMatmulPreference_t pref = nullptr;
  NVH_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::size_t workspace = kWorkspaceBytes;
  NVH_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace));
  set_alignment_prefs(pref, g, target);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(gpu.cublas_lt(), plan.op, plan.w, plan.a, plan.y,
                                                               plan.y, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status == CUBLAS_STATUS_SUCCESS && found > 0) {
    plan.algo = result.algo;
    plan.has_algo = true;
  }
  return plan;
}

const LtPlan& plan_for(nvh::CudaBackend& gpu, const GemmStepArgs& g, const void* target) {
  static std::mutex mutex;
  static std::map<PlanKey, LtPlan> plans;
  std::lock_guard<std::mutex> lock(mutex);
  const PlanKey key = key_of(gpu, g, target);
  auto it = plans.find(key);
  if (it == plans.end()) it = plans.emplace(key, build_plan(gpu, g, target)).first;
  return it->second;
}

void bias_and_round(nvh::CudaBackend& gpu, const GemmStepArgs& g, const float* acc) {
  const BiasRound::Params p{acc, static_cast<const uint16_t*>(g.bias), static_cast<uint16_t*>(g.Y),
                            g.M, g.N, half_kind(g.dtype)};
  nvh::launch_on_cuda<BiasRound>(gpu, BiasRound::shape(p), p);
}

void run_lt(nvh::CudaBackend& gpu, const LtPlan& plan, const GemmStepArgs& g, void* target) {
  if (output_of(g) == Output::bias_epilogue) {
    NVH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias, sizeof g.bias));
  }
  const float one = 1.0f, zero = 0.0f;
  NVH_CUBLAS_CHECK(cublasLtMatmul(gpu.cublas_lt(), plan.op, &one, g.W, plan.w, g.A, plan.a, &zero, target, plan.y,
                                  target, plan.y, &plan.algo, gpu.workspace(kWorkspaceBytes), kWorkspaceBytes, gpu.stream()));
  if (output_of(g) == Output::f32_then_bias_round) bias_and_round(gpu, g, static_cast<const float*>(target));
}

// No cuBLASLt algorithm for this layout: fp32 accumulators from
// cublasGemmEx, then bias and one rounding.
void run_gemmex_fallback(nvh::CudaBackend& gpu, const GemmStepArgs& g) {
  nvh::Buffer acc(gpu, static_cast<std::size_t>(g.M * g.N) * sizeof(float));
  const float one = 1.0f, zero = 0.0f;
  const cudaDataType_t t = cuda_type(g.dtype);
  NVH_CUBLAS_CHECK(cublasGemmEx(gpu.cublas(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(g.N),
                                static_cast<int>(g.M), static_cast<int>(g.K), &one, g.W, t,
                                static_cast<int>(g.K), g.A, t, static_cast<int>(g.K), &zero, acc.data(),
                                CUDA_R_32F, static_cast<int>(g.N), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  bias_and_round(gpu, g, acc.as<float>());
  gpu.synchronize();  // `acc` is freed on return
}

}  // namespace

std::string gemm_step_variant_cuda(nvh::Backend& backend, const GemmStepArgs& g) {
  auto& gpu = static_cast<nvh::CudaBackend&>(backend);
  if (!plan_for(gpu, g, product_target(gpu, g)).has_algo) return "gemmex_f32+bias_round";
  switch (output_of(g)) {
    case Output::direct: return "cublaslt";
    case Output::bias_epilogue: return "cublaslt_bias";
    case Output::f32_then_bias_round: return "cublaslt_f32+bias_round";
  }
  return "";
}

void run_gemm_step_cuda(nvh::Backend& backend, const GemmStepArgs& g) {
  auto& gpu = static_cast<nvh::CudaBackend&>(backend);
  void* target = product_target(gpu, g);
  const LtPlan& plan = plan_for(gpu, g, target);
  if (plan.has_algo) {
    run_lt(gpu, plan, g, target);
  } else {
    run_gemmex_fallback(gpu, g);
  }
}

}  // namespace nvfp4
