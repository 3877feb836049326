// The GPU against the host executor, running the same kernel source on the
// same inputs: the dequant scratch of both prefill routes and gemv_scalar's
// output must match bit for bit everywhere (same arithmetic, same order);
// gemv_mma's and prefill_fused's output in exact mode (the tensor core's internal summation order
// is not specified, so elsewhere only the bound of matmul_case.cc holds).
// Fifty shapes per route. Needs a CUDA device; says so when there is none.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "harness/backend.h"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"
#include "kernels/nvfp4_matmul/gemv_mma_slices.cuh"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "properties/nvfp4_matmul/matmul_case.h"

namespace nvfp4 {
namespace {

constexpr int kShapesPerRoute = 50;

class GpuAgainstHost : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = nvh::cuda_unavailable_reason();
    if (!why.empty())
      GTEST_SKIP() << "needs a CUDA device to compare with the host executor: " << why;
    gpu_ = nvh::make_cuda_backend();
    host_ = nvh::make_host_backend();
  }

  // Runs `spec` on both backends; returns {host run, GPU run}.
  std::pair<CaseRun, CaseRun> both(const CaseSpec& spec) {
    const CaseInputs in = make_inputs(spec);
    return {run_case(*host_, spec, in), run_case(*gpu_, spec, in)};
  }

  // Runs `spec` on both backends: the GPU took `route` (and, when given, a
  // variant containing `variant_part`), and the two outputs' SHA-256 agree.
  void expect_same_output(const CaseSpec& spec, Route route, const char* variant_part = nullptr) {
    const auto [host, gpu] = both(spec);
    ASSERT_EQ(gpu.decision.route, route) << spec.name();
    if (variant_part) {
      ASSERT_NE(gpu.decision.variant.find(variant_part), std::string::npos) << spec.name();
    }
    EXPECT_EQ(host.y_sha256, gpu.y_sha256) << spec.name();
  }

  // kShapesPerRoute shapes of M in [m_lo, m_hi] on the forced fused route,
  // exact mode: the GPU ran a variant containing `variant`, with the host's bits.
  void expect_wgmma_shapes(uint32_t seed, int64_t m_lo, int64_t m_hi, const char* variant);

  std::unique_ptr<nvh::Backend> gpu_, host_;
};

CaseSpec shape(std::mt19937& rng, int64_t m_lo, int64_t m_hi, int64_t k_unit, int64_t k_max,
               int64_t bs) {
  CaseSpec s;
  s.M = std::uniform_int_distribution<int64_t>(m_lo, m_hi)(rng);
  s.N = std::uniform_int_distribution<int64_t>(1, 72)(rng);
  s.K = k_unit * std::uniform_int_distribution<int64_t>(1, k_max / k_unit)(rng);
  s.block_size = bs;
  s.dtype = rng() % 2 ? DType::fp16 : DType::bf16;
  s.bias = rng() % 2;
  s.seed = rng() % 1000;
  return s;
}

void expect_same_scratch(const CaseRun& host, const CaseRun& gpu, const CaseSpec& s, Route route) {
  ASSERT_EQ(host.decision.route, route) << s.name();
  ASSERT_EQ(gpu.decision.route, route) << s.name();
  ASSERT_FALSE(host.scratch.empty());
  ASSERT_EQ(host.scratch.size(), gpu.scratch.size());
  EXPECT_EQ(std::memcmp(host.scratch.data(), gpu.scratch.data(), host.scratch.size() * 2), 0)
      << s.name();
}

TEST_F(GpuAgainstHost, PrefillVec8ScratchIsBitwiseEqual) {
  std::mt19937 rng(101);
  for (int i = 0; i < kShapesPerRoute; ++i) {
    CaseSpec s = shape(rng, 9, 40, 8, 512, 2 * std::uniform_int_distribution<int64_t>(1, 32)(rng));
    s.options.force_route = Route::prefill_vec8;  // block_size 16 and K % 128 == 0 shapes too
    const auto [host, gpu] = both(s);
    expect_same_scratch(host, gpu, s, Route::prefill_vec8);
  }
}

TEST_F(GpuAgainstHost, PrefillScalarScratchIsBitwiseEqual) {
  std::mt19937 rng(202);
  for (int i = 0; i < kShapesPerRoute; ++i) {
    CaseSpec s = shape(rng, 9, 40, 1, 300,
                       2 * std::uniform_int_distribution<int64_t>(0, 16)(rng) + 1);  // odd
    const auto [host, gpu] = both(s);
    expect_same_scratch(host, gpu, s, Route::prefill_scalar);
  }
}

TEST_F(GpuAgainstHost, GemvScalarOutputIsBitwiseEqual) {
  std::mt19937 rng(303);
  for (int i = 0; i < kShapesPerRoute; ++i) {
    CaseSpec s = shape(rng, 1, 8, 32, 1024, 16);
    s.options.force_route = Route::gemv_scalar;  // K % 128 == 0 shapes too
    ASSERT_NO_FATAL_FAILURE(expect_same_output(s, Route::gemv_scalar));
  }
}

TEST_F(GpuAgainstHost, GemvMmaOutputIsBitwiseEqualInExactMode) {
  std::mt19937 rng(404);
  for (int i = 0; i < kShapesPerRoute; ++i) {
    CaseSpec s = shape(rng, 1, 8, 128, 1024, 16);
    s.exact = true;
    ASSERT_NO_FATAL_FAILURE(expect_same_output(s, Route::gemv_mma));
  }
}

// The same where A is too large to pre-pair (activations_fit fails: A read
// from global memory, GemvMma::kStagesFromA stages per warp): K up to 16384
// (at least 2304 at M = 8, 6144 at M = 3), so that on the GPU, where 8 warps split a tile's K, each
// part streams past the pipeline's depth and its slots wrap around.
TEST_F(GpuAgainstHost, GemvMmaFromAOutputIsBitwiseEqualInExactMode) {
  std::mt19937 rng(406);
  for (int i = 0; i < kShapesPerRoute; ++i) {
    CaseSpec s = shape(rng, 3, 8, 128, 16384, 16);
    while (GemvMma::activations_fit(s.M, s.K)) s.K += 128;
    s.N = std::min<int64_t>(s.N, 40);  // the host executor's time grows with N * K
    s.exact = true;
    ASSERT_NO_FATAL_FAILURE(expect_same_output(s, Route::gemv_mma));
  }
}

// gemv_mma's sliced layout (gemv_mma_slices.cuh): K of 48 to 64 stages, so
// that the plan slices K, every slice of 4 stages or more.
TEST_F(GpuAgainstHost, GemvMmaSlicesOutputIsBitwiseEqualInExactMode) {
  std::mt19937 rng(407);
  constexpr int64_t kMinK = GemvMmaSlices::kMinStagesToSlice * GemvMma::kStageK;
  for (int i = 0; i < kShapesPerRoute; ++i) {
    CaseSpec s = shape(rng, 1, 8, 128, kMinK / 3, 16);
    s.K += kMinK;                      // 12288 to 16384
    s.N = std::min<int64_t>(s.N, 40);  // the host executor's time grows with N * K
    s.exact = true;
    ASSERT_NO_FATAL_FAILURE(expect_same_output(s, Route::gemv_mma, "/slices"));
  }
}

// prefill_fused's GEMV-shaped path (two groups of A's rows): 8 < M <=
// kMaxFusedM, K of 8 to 32 stages, so that its plan takes it.
TEST_F(GpuAgainstHost, PrefillFusedGemvPathOutputIsBitwiseEqualInExactMode) {
  std::mt19937 rng(506);
  for (int i = 0; i < kShapesPerRoute; ++i) {
    CaseSpec s = shape(rng, 9, GemvMmaSlices16::kMaxFusedM, 128, 6144, 16);
    s.K += 2048;
    s.exact = true;
    ASSERT_NO_FATAL_FAILURE(expect_same_output(s, Route::prefill_fused, "gemv16/"));
  }
}

// M across every mma.sync block shape of prefill_fused (1, 2, 4, 8 tiles
// of A, and more than one block over M), forced so the crossover does not
// decide, with caps without wgmma so that its mma.sync shapes run above
// M = 64 too (the next test has the wgmma kernel's).
TEST_F(GpuAgainstHost, PrefillFusedOutputIsBitwiseEqualInExactMode) {
  std::mt19937 rng(505);
  Caps mma_sync;
  mma_sync.sm = 90;
  for (int i = 0; i < kShapesPerRoute; ++i) {
    CaseSpec s = shape(rng, 9, 300, 128, 1024, 16);
    s.exact = true;
    s.options.force_route = Route::prefill_fused;
    s.options.simulated_caps = mma_sync;
    ASSERT_NO_FATAL_FAILURE(expect_same_output(s, Route::prefill_fused));
  }
}

// prefill_fused_wgmma.cuh on a GPU that has wgmma, K from one step to 12
// (slices of it by the plan): w128n128 for 64 < M <= 128, then w256n128
// (two tiles of A a block) for M from one block's rows to three blocks.
void GpuAgainstHost::expect_wgmma_shapes(uint32_t seed, int64_t m_lo, int64_t m_hi,
                                         const char* variant) {
  std::mt19937 rng(seed);
  for (int i = 0; i < kShapesPerRoute; ++i) {
    CaseSpec s = shape(rng, m_lo, m_hi, 128, 1536, 16);
    s.exact = true;
    s.options.force_route = Route::prefill_fused;
    ASSERT_NO_FATAL_FAILURE(expect_same_output(s, Route::prefill_fused, variant));
  }
}
TEST_F(GpuAgainstHost, PrefillWgmmaOutputIsBitwiseEqualInExactMode) {
  if (!device_caps(*gpu_).wgmma) GTEST_SKIP() << "this GPU has no wgmma (sm_90a)";
  expect_wgmma_shapes(507, 65, 128, "w128n128");
}
TEST_F(GpuAgainstHost, PrefillWgmmaTwoTilesOutputIsBitwiseEqualInExactMode) {
  if (!device_caps(*gpu_).wgmma) GTEST_SKIP() << "this GPU has no wgmma (sm_90a)";
  expect_wgmma_shapes(509, 129, 700, "w256n128");
}

}  // namespace
}  // namespace nvfp4
