// The native_sm120 route (DESIGN.md): activations quantized to NVFP4 on the
// fly, then one block-scaled FP4 matmul through cuBLASLt,
//   Y = (g_a * g_w) * sum_k (e2m1(a) * s_a) * (e2m1(w) * s_w)  (+ bias),
// on devices that have it (sm 10.x / 12.x, CUDA build). The quantizer
// (native_sm120.cuh) runs on every backend; the matmul only on such a GPU.
#pragma once

#include <cstdint>

#include "harness/backend.h"
#include "kernels/nvfp4_matmul/nvfp4_types.h"

namespace nvfp4 {

enum class ScaleOrder : uint8_t { row_major, tiled_128x4 };

// Where quantize_activations writes, all backend memory.
struct QuantizedActivations {
  uint8_t* packed = nullptr;      // [M, K/2] E2M1, low nibble = even k
  uint8_t* scales = nullptr;      // [M, K/16] row-major, or tiled_scale_bytes(M, K/16) tiled
  float* global_scale = nullptr;  // one float
};

// A [M, K] (fp16/bf16 bits, backend memory), K % 16 == 0, every value finite
// -> bit for bit ref::quantize_nvfp4(float(A), M, K, 16). Tiled scales get
// their padding zeroed. Returns once the backend is done (it owns scratch).
// Throws std::invalid_argument for bad sizes or null pointers.
void quantize_activations(nvh::Backend& backend, const uint16_t* A, int64_t M, int64_t K,
                          DType dtype, ScaleOrder order, const QuantizedActivations& out);

// Row-major [rows, cols] scales -> the tiled layout (scale_layout.h), every
// byte of `tiled` written.
void retile_scales(nvh::Backend& backend, const uint8_t* row_major, int64_t rows, int64_t cols,
                   uint8_t* tiled);

// Whether this backend has the block-scaled FP4 matmul (Caps::native_fp4).
bool native_fp4_available(const nvh::Backend& backend);

// Runs the route for a described problem. Throws RouteUnavailable
// (nvfp4_matmul.h) where it cannot run, naming what is missing.
void run_native_sm120(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem);

#if defined(NVH_HAVE_CUDA)
bool native_fp4_available_cuda(const nvh::Backend& backend);
void run_native_sm120_cuda(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem);
#endif

}  // namespace nvfp4
