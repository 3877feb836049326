#include "kernels/nvfp4_matmul/native_sm120.h"

#include <stdexcept>
#include <string>

#include "harness/launch.h"
#include "kernels/nvfp4_matmul/native_sm120.cuh"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "kernels/nvfp4_matmul/scale_layout.h"

namespace nvfp4 {
namespace {

[[noreturn]] void bad(const char* fn, const std::string& what) {
  throw std::invalid_argument(std::string(fn) + ": " + what);
}

void check_quantize_args(int64_t M, int64_t K, const uint16_t* A, const QuantizedActivations& out) {
  constexpr const char* fn = "quantize_activations";
  if (M < 0) bad(fn, "M = " + std::to_string(M) + ": negative");
  if (K < 0 || K % kActBlock != 0)
    bad(fn, "K = " + std::to_string(K) + ": must be a non-negative multiple of 16");
  checked_mul(M, K, "quantize_activations: M * K");
  const bool has_elements = M * K > 0;
  if (has_elements && (A == nullptr || out.packed == nullptr || out.scales == nullptr)) {
    bad(fn, "A, out.packed and out.scales must not be null with " + std::to_string(M * K) +
                " elements");
  }
  if (out.global_scale == nullptr) bad(fn, "out.global_scale = null");
}

}  // namespace

void quantize_activations(nvh::Backend& backend, const uint16_t* A, int64_t M, int64_t K,
                          DType dtype, ScaleOrder order, const QuantizedActivations& out) {
  check_quantize_args(M, K, A, out);
  const nvh::HalfKind kind = half_kind(dtype);

  const ActAmaxPartial::Params amax{A, M * K, kind, nullptr};
  const nvh::LaunchShape amax_shape = ActAmaxPartial::shape(amax);
  nvh::Buffer partial(backend, amax_shape.grid.x * sizeof(float));
  ActAmaxPartial::Params amax_to = amax;
  amax_to.partial = partial.as<float>();
  nvh::launch<ActAmaxPartial>(backend, amax_shape, amax_to);

  const ActGlobalScale::Params global{partial.as<float>(), amax_shape.grid.x, out.global_scale};
  nvh::launch<ActGlobalScale>(backend, ActGlobalScale::shape(global), global);

  if (M * K > 0) {
    const bool tiled = order == ScaleOrder::tiled_128x4;
    if (tiled)
      backend.fill(out.scales, 0, static_cast<std::size_t>(tiled_scale_bytes(M, K / kActBlock)));
    const ActQuantize::Params q{A, M, K, kind, out.global_scale, out.packed, out.scales, tiled};
    nvh::launch<ActQuantize>(backend, ActQuantize::shape(q), q);
  }
  backend.synchronize();  // `partial` is freed on return
}

void retile_scales(nvh::Backend& backend, const uint8_t* row_major, int64_t rows, int64_t cols,
                   uint8_t* tiled) {
  constexpr const char* fn = "retile_scales";
  if (rows < 0 || cols < 0) {
    bad(fn, "rows = " + std::to_string(rows) + ", cols = " + std::to_string(cols) + ": negative");
  }
  if (rows * cols == 0) return;
  if (row_major == nullptr || tiled == nullptr) bad(fn, "row_major and tiled must not be null");
  const ScaleRetile::Params p{row_major, rows, cols, tiled};
  nvh::launch<ScaleRetile>(backend, ScaleRetile::shape(p), p);
}

bool native_fp4_available(const nvh::Backend& backend) {
  // No branch coverage below: the other direction needs a GPU backend, which a host-only (gcov)
  // build cannot make.
  if (backend.kind() == nvh::BackendKind::host) return false;  // LCOV_EXCL_BR_LINE
#if defined(NVH_HAVE_CUDA)
  return native_fp4_available_cuda(backend);
#else
  return false;  // LCOV_EXCL_LINE: defensive, no GPU backend exists without CUDA
#endif
}

void run_native_sm120(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem) {
#if defined(NVH_HAVE_CUDA)
  if (backend.kind() == nvh::BackendKind::cuda) {
    run_native_sm120_cuda(backend, args, problem);
    return;
  }
#endif
  (void)args;
  (void)problem;
  throw RouteUnavailable(Route::native_sm120, "a CUDA device (the " + backend.name() +
                                                  " backend has no block-scaled FP4 matmul)");
}

}  // namespace nvfp4
