#include "properties/nvfp4_matmul/route_oracle.h"

#include "kernels/nvfp4_matmul/prefill_fused_plan.h"

namespace nvfp4 {
namespace {

// Where the H200 measured prefill_fused faster than dequant + GEMM
// (route_table.cc): M <= 16 on any weights; M <= 32 on 2^20 weights (N x K)
// or more; M <= 64 on 2^23 or more, and with wgmma M <= 128 on 2^23 and M <=
// 256 on 2^24, and 448 <= M <= 512 where the plan's blocks fill their
// rounds to 80 %, M = 768 and 1024 where they fill them to 90 % (the plan's
// own rule, tested with the plan).
bool fused_preferred_here(const CaseSpec& s, const Caps& caps) {
  const double weights = static_cast<double>(s.N) * static_cast<double>(s.K);  // exact here
  if (s.M <= 16) return true;
  if (s.M <= 32) return weights >= 1024.0 * 1024;
  if (s.M <= 64) return weights >= 8.0 * 1024 * 1024;
  if (!caps.wgmma) return false;
  if (s.M <= 128) return weights >= 8.0 * 1024 * 1024;
  if (s.M <= 256) return weights >= 16.0 * 1024 * 1024;
  const FusedPlan plan = prefill_fused_plan(s.M, s.N, s.K, true);
  if (s.M >= 448 && s.M <= 512) return prefill_fused_fills_its_rounds(plan, s.M, s.N, s.K, 80);
  return (s.M == 768 || s.M == 1024) && prefill_fused_fills_its_rounds(plan, s.M, s.N, s.K, 90);
}

}  // namespace

ExpectedRoute expected_route(const CaseSpec& s, const Caps& device) {
  const Caps caps = s.options.simulated_caps ? *s.options.simulated_caps : device;
  if (s.options.force_route) return {*s.options.force_route, "forced"};

  // Empty problems first, in the order M, N, K.
  if (s.M == 0) return {Route::empty, "m_zero"};
  if (s.N == 0) return {Route::empty, "n_zero"};
  if (s.K == 0) return {Route::empty, "k_zero"};

  // Buffers start on 256-byte boundaries plus the case's offsets.
  const bool a16 = s.a_offset % 16 == 0, b16 = s.b_offset % 16 == 0, b4 = s.b_offset % 4 == 0;
  const bool scratch16 = s.scratch_offset % 16 == 0, scales4 = s.scales_offset % 4 == 0;

  // Decode: small M, the GEMV block size, aligned operands, K in 32s.
  if (s.M <= 8 && s.block_size == 16 && a16 && b16 && scales4) {
    if (s.K % 128 == 0 && caps.sm >= 80) return {Route::gemv_mma, "decode_mma"};
    if (s.K % 32 == 0) {
      return {Route::gemv_scalar,
              s.K % 128 != 0 ? "decode_k_not_multiple_of_128" : "decode_sm_below_80"};
    }
  }

  // Native FP4: opted in, an sm_12x device that has it, and its shape rules.
  const bool sm12x = caps.sm / 10 == 12;
  if (s.options.native_opt_in && sm12x && caps.native_fp4 && s.block_size == 16 && s.K % 32 == 0 &&
      s.N % 32 == 0) {
    return {Route::native_sm120, "native_opted_in"};
  }

  // Fused prefill: the GEMM that dequantizes on chip, where the bench measured
  // it faster than dequant + GEMM (fused_preferred_here), with the GEMV's
  // block size and alignment, whole 128-k steps and mma.sync (sm >= 80).
  std::string why_not_fused;
  if (s.block_size != 16) {
    why_not_fused = "fused_block_size_not_16";
  } else if (!a16 || !b16 || !scales4) {
    why_not_fused = "fused_unaligned";
  } else if (s.K % 128 != 0) {
    why_not_fused = "fused_k_not_multiple_of_128";
  } else if (caps.sm < 80) {
    why_not_fused = "fused_sm_below_80";
  } else if (!fused_preferred_here(s, caps)) {
    why_not_fused = "fused_m_above_crossover";
  } else {
    return {Route::prefill_fused, "fused_mma"};
  }

  // Prefill: vectorized when byte pairs never straddle scales and 8-value chunks fit.
  if (s.block_size % 2 != 0) return {Route::prefill_scalar, "odd_block_size"};
  if (s.K % 8 != 0) return {Route::prefill_scalar, "k_not_multiple_of_8"};
  if (!b4 || !scratch16) return {Route::prefill_scalar, "unaligned"};
  return {Route::prefill_vec8, why_not_fused};
}

}  // namespace nvfp4
