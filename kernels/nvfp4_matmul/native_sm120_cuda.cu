// native_sm120 on the GPU: the block-scaled FP4 matmul through cuBLASLt
// (CUDA_R_4F_E2M1 operands, CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3 scales,
// fp32 compute, fp16/bf16 output). Host code only: it compiles for every
// architecture the build targets and runs where cuBLASLt has the kernels
// (sm_100a / sm_120a class devices).
//
// Operand order. cuBLAS is column-major and FP4 wants both operands K-major
// ("TN"). Y [M, N] row-major is the column-major [N, M] matrix
//   Yc = W_q * A_q^T:
//   cuBLASLt A = W_q: packed B [N, K/2] row-major is a column-major [K, N]
//                matrix (ld = K elements), used transposed (TRANSA = T);
//   cuBLASLt B = A_q: the quantized activations [M, K/2] row-major, a
//                column-major [K, M] matrix (ld = K), used as is (TRANSB = N);
//   D = Y, [N, M] column-major with ld = N; the bias is a per-row vector of
//   Yc, which CUBLASLT_EPILOGUE_BIAS broadcasts.
// Each operand's scales are tiled over its outer dimension: the weights'
// over N (weight_scale re-tiled by ScaleRetile), the activations' over M
// (written tiled by ActQuantize).
//
// The tensor scales. VEC16_UE4M3 mode takes only the block scales, so the two
// fp32 tensor scales enter through alpha: with A ~ e2m1(a) * s_a * g_a and
// W ~ e2m1(w) * s_w * g_w,
//   Y = (g_a * g_w) * sum_k (e2m1(a) s_a)(e2m1(w) s_w) + bias,
// alpha = g_a * g_w rounded once to fp32; cuBLASLt adds the bias after alpha.
// alpha is passed by host pointer (the mode every cuBLASLt FP4 sample uses),
// so g_a is read back first: one synchronization per call.
#include <string>
#include <utility>

#include "harness/backend_cuda.h"
#include "kernels/nvfp4_matmul/native_sm120.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "kernels/nvfp4_matmul/scale_layout.h"

namespace nvfp4 {
namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;
// cuBLASLt gained block-scaled FP4 (VEC16_UE4M3) in 12.8.
constexpr std::size_t kFirstFp4CublasLt = 120800;

cudaDataType_t output_type(DType t) { return t == DType::fp16 ? CUDA_R_16F : CUDA_R_16BF; }

// The descriptors of one call, destroyed with it.
struct LtCall {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t w = nullptr, a = nullptr, y = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtCall() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (y) cublasLtMatrixLayoutDestroy(y);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (w) cublasLtMatrixLayoutDestroy(w);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

template <class T>
void set(cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t attr, const T& value) {
  NVH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, attr, &value, sizeof value));
}

// The backend buffers the route fills before the matmul.
struct NativeOperands {
  const void* w_packed;
  const uint8_t* w_scales;  // tiled over N
  const uint8_t* a_packed;
  const uint8_t* a_scales;  // tiled over M
};

void set_preferences(LtCall& call, const MatmulArgs& args, const NativeOperands& in) {
  NVH_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&call.pref));
  const std::size_t workspace = kWorkspaceBytes;
  const uint32_t w = nvh::address_alignment(in.w_packed), a = nvh::address_alignment(in.a_packed),
                 y = nvh::address_alignment(args.Y.data);
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, w},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, y},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, y}};
  NVH_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      call.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace));
  for (const auto& [attr, bytes] : alignments) {
    NVH_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(call.pref, attr, &bytes, sizeof bytes));
  }
}

void describe(LtCall& call, const Problem& p, const MatmulArgs& args, const NativeOperands& in) {
  NVH_CUBLAS_CHECK(cublasLtMatmulDescCreate(&call.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  set(call.op, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  set(call.op, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  const cublasLtMatmulMatrixScale_t vec16 = CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
  set(call.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, vec16);
  set(call.op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, vec16);
  set(call.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(in.w_scales));
  set(call.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(in.a_scales));
  if (p.has_bias) {
    const cudaDataType_t bias_type = output_type(p.dtype);
    set(call.op, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
    set(call.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type);
    set(call.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(args.bias.data));
  }
  NVH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&call.w, CUDA_R_4F_E2M1, p.K, p.N, p.K));
  NVH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&call.a, CUDA_R_4F_E2M1, p.K, p.M, p.K));
  NVH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&call.y, output_type(p.dtype), p.N, p.M, p.N));
  set_preferences(call, args, in);
}

std::string shape_text(const Problem& p) {
  return "M = " + std::to_string(p.M) + ", N = " + std::to_string(p.N) +
         ", K = " + std::to_string(p.K) + ", " + dtype_name(p.dtype) + (p.has_bias ? ", bias" : "");
}

cublasLtMatmulAlgo_t pick_algo(nvh::CudaBackend& gpu, const LtCall& call, const Problem& p) {
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      gpu.cublas_lt(), call.op, call.w, call.a, call.y, call.y, call.pref, 1, &result, &found);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
    throw RouteUnavailable(Route::native_sm120,
                           std::string("a cuBLASLt block-scaled FP4 algorithm for ") +
                               shape_text(p) + " (heuristic: " + cublasGetStatusName(status) +
                               ", " + std::to_string(found) + " found)");
  }
  return result.algo;
}

// g_a * g_w, both read back from the device, rounded once in fp32.
float read_alpha(nvh::Backend& backend, const float* g_a, const MatmulArgs& args) {
  float ga = 0.f, gw = 0.f;
  backend.copy_out(&ga, g_a, sizeof ga);
  backend.copy_out(&gw, args.weight_scale_2.data, sizeof gw);
  return ga * gw;
}

}  // namespace

bool native_fp4_available_cuda(const nvh::Backend& backend) {
  const int major = backend.caps().sm_major;
  return (major == 10 || major == 12) && cublasLtGetVersion() >= kFirstFp4CublasLt;
}

void run_native_sm120_cuda(nvh::Backend& backend, const MatmulArgs& args, const Problem& p) {
  auto& gpu = static_cast<nvh::CudaBackend&>(backend);
  const int64_t scale_cols = p.K / 16;
  nvh::Buffer a_packed(gpu, static_cast<std::size_t>(p.M * p.K / 2));
  nvh::Buffer a_scales(gpu, static_cast<std::size_t>(tiled_scale_bytes(p.M, scale_cols)));
  nvh::Buffer w_scales(gpu, static_cast<std::size_t>(tiled_scale_bytes(p.N, scale_cols)));
  nvh::Buffer g_a(gpu, sizeof(float));

  quantize_activations(gpu, static_cast<const uint16_t*>(args.A.data), p.M, p.K, p.dtype,
                       ScaleOrder::tiled_128x4,
                       {a_packed.as<uint8_t>(), a_scales.as<uint8_t>(), g_a.as<float>()});
  retile_scales(gpu, static_cast<const uint8_t*>(args.weight_scale.data), p.N, scale_cols,
                w_scales.as<uint8_t>());
  const float alpha = read_alpha(gpu, g_a.as<float>(), args), beta = 0.f;

  LtCall call;
  const NativeOperands in{args.B.data, w_scales.as<uint8_t>(), a_packed.as<uint8_t>(),
                          a_scales.as<uint8_t>()};
  describe(call, p, args, in);
  const cublasLtMatmulAlgo_t algo = pick_algo(gpu, call, p);
  NVH_CUBLAS_CHECK(cublasLtMatmul(gpu.cublas_lt(), call.op, &alpha, in.w_packed, call.w,
                                  in.a_packed, call.a, &beta, args.Y.data, call.y, args.Y.data,
                                  call.y, &algo, gpu.workspace(kWorkspaceBytes), kWorkspaceBytes,
                                  gpu.stream()));
  gpu.synchronize();  // the quantized activations and tiled scales are freed on return
}

}  // namespace nvfp4
