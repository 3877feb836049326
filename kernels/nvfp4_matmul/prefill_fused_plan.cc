#include "kernels/nvfp4_matmul/prefill_fused_plan.h"

#include <array>
#include <string>

#include "kernels/nvfp4_matmul/gemv_mma_slices.cuh"
#include "kernels/nvfp4_matmul/prefill_fused.cuh"

namespace nvfp4 {
namespace {

// What the plan needs of a shape: its block's rows of A and W, and how many
// of its blocks an SM holds (kMinBlocksPerSM: by shared memory, registers
// capped to match).
struct ShapeFacts {
  int64_t rows, cols, blocks_per_sm;
};

ShapeFacts facts(FusedShape s) {
  return with_fused_shape(s, [](auto tag) {
    using F = typename decltype(tag)::type;
    return ShapeFacts{F::kTileRows, F::kTileCols, F::kMinBlocksPerSM};
  });
}

FusedShape shape_for(int64_t M) {
  return M <= 16    ? FusedShape::m16n64
         : M <= 32  ? FusedShape::m32n128
         : M <= 128 ? FusedShape::m64n128
                    : FusedShape::m128n128;
}

// A model of the time S slices take, in bytes moved at one rate: the
// weights and the A each block over N reads, spread over the waves the
// blocks take (a wave is as long as one block's share, 1 / S of it), plus
// the parts written and read back once.
double split_cost(int64_t M, int64_t N, int64_t K, const ShapeFacts& f, int64_t blocks,
                  int64_t slots, int64_t slices) {
  const double n_blocks = static_cast<double>((N + f.cols - 1) / f.cols);
  const double streamed = 0.5625 * static_cast<double>(N) * static_cast<double>(K) +
                          2.0 * static_cast<double>(M) * static_cast<double>(K) * n_blocks;
  const int64_t waves = (blocks * slices + slots - 1) / slots;
  const double parts = slices > 1 ? 8.0 * static_cast<double>(slices * M * N) : 0.0;
  return streamed * static_cast<double>(waves) / static_cast<double>(slices) + parts;
}

}  // namespace

FusedPlan prefill_fused_plan(int64_t M, int64_t N, int64_t K) {
  const FusedShape shape = shape_for(M);
  if (M <= 0 || N <= 0 || K < 128) return {shape, 1};  // described, never run (the route's needs)
  const uint32_t gemv_slices = GemvMmaSlices16::slices_for(M, N, K);
  if (gemv_slices > 1) return {shape, 1, gemv_slices};
  const ShapeFacts f = facts(shape);
  const int64_t m_blocks = (M + f.rows - 1) / f.rows;
  const int64_t blocks = (N + f.cols - 1) / f.cols * (m_blocks < 65535 ? m_blocks : 65535);
  const int64_t slots = kFusedPlanMultiprocessors * f.blocks_per_sm;
  if (blocks >= slots) return {shape, 1};
  int64_t most = K / 128;                      // a slice holds a step at least
  if (most > K / (4 * M)) most = K / (4 * M);  // the parts fit in half the scratch
  if (most > kFusedMaxKSlices) most = kFusedMaxKSlices;
  int32_t best = 1;
  for (int32_t s = 2; s <= most; ++s) {
    if (split_cost(M, N, K, f, blocks, slots, s) < split_cost(M, N, K, f, blocks, slots, best)) {
      best = s;
    }
  }
  return {shape, best};
}

const char* prefill_fused_variant_name(const FusedPlan& plan) {
  if (plan.gemv_slices > 1) return GemvMmaSlices16::variant_name(plan.gemv_slices);
  static const auto names = [] {
    std::array<std::array<std::string, kFusedMaxKSlices + 1>, 4> n;
    const char* shapes[] = {"m16n64", "m32n128", "m64n128", "m128n128"};
    for (std::size_t s = 0; s < n.size(); ++s) {
      for (int32_t k = 1; k <= kFusedMaxKSlices; ++k) {
        n[s][k] = std::string(shapes[s]) + (k > 1 ? "/k" + std::to_string(k) : "");
      }
    }
    return n;
  }();
  return names[static_cast<std::size_t>(plan.shape)][plan.k_slices].c_str();
}

std::size_t prefill_fused_workspace_bytes(int64_t M, int64_t N, const FusedPlan& plan) {
  if (plan.k_slices == 1) return 0;
  return static_cast<std::size_t>(plan.k_slices * M * N) * sizeof(float) + 16;
}

}  // namespace nvfp4
