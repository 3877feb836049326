#include <vector>

#include "harness/host_executor.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/gemm_step.h"

namespace nvfp4 {
namespace {

std::vector<float> widen(const void* bits, int64_t count, nvh::HalfKind kind) {
  const auto* in = static_cast<const uint16_t*>(bits);
  std::vector<float> out(static_cast<std::size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[i] = nvh::half_bits_to_float(in[i], kind);
  return out;
}

}  // namespace

void run_gemm_step_host(const GemmStepArgs& a) {
  const nvh::HalfKind kind = half_kind(a.dtype);
  // Widened once up front: the loop then reads floats, as the GPU's GEMM reads
  // its operands into fp32 before multiplying (both conversions are exact).
  const std::vector<float> A = widen(a.A, a.M * a.K, kind), W = widen(a.W, a.N * a.K, kind);
  auto* Y = static_cast<uint16_t*>(a.Y);
  const auto* bias = static_cast<const uint16_t*>(a.bias);
  // One host "block" per output row; the executor spreads rows over cores.
  nvh::LaunchShape rows;
  rows.grid = {static_cast<uint32_t>(a.M), 1, 1};
  rows.block = {1, 1, 1};
  nvh::run_grid_on_host(rows, [&](nvh::HostCtx& ctx) {
    const int64_t m = ctx.block_idx().x;
    for (int64_t n = 0; n < a.N; ++n) {
      float acc = 0.0f;
      for (int64_t k = 0; k < a.K; ++k) acc = nvh::fma_rn(A[m * a.K + k], W[n * a.K + k], acc);
      if (bias) acc = nvh::add_rn(acc, nvh::half_bits_to_float(bias[n], kind));
      Y[m * a.N + n] = nvh::round_to_half_bits(acc, kind);
    }
  });
}

std::string gemm_step_variant(nvh::Backend& backend, const GemmStepArgs& args) {
  // No branch coverage below: the other direction needs a GPU backend; a host-only (gcov) build has
  // none.
  if (backend.kind() == nvh::BackendKind::host) return "host_fp32_loop";  // LCOV_EXCL_BR_LINE
#if defined(NVH_HAVE_CUDA)
  return gemm_step_variant_cuda(backend, args);
#else
  (void)args;
  return "unavailable";  // LCOV_EXCL_LINE: defensive, no GPU backend exists without CUDA
#endif
}

void run_gemm_step(nvh::Backend& backend, const GemmStepArgs& args) {
  if (backend.kind() ==
      nvh::BackendKind::host) {  // LCOV_EXCL_BR_LINE: GPU backend only in a CUDA build
    run_gemm_step_host(args);
    return;
  }
#if defined(NVH_HAVE_CUDA)
  run_gemm_step_cuda(backend, args);
#endif
}

}  // namespace nvfp4
