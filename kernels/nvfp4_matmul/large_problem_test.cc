// Index arithmetic past 2^31: one weight with more than 2^31 values, on the
// GPU (the host executor would take many minutes over it, so this suite asks
// for a CUDA device and says so when there is none). Rows on both sides of
// flat index 2^31 are checked bit for bit against the reference dequant, and
// outputs that read them against the fp64 reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "harness/backend.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "reference/nvfp4_matmul/dequant.h"
#include "reference/nvfp4_matmul/float16.h"
#include "reference/nvfp4_matmul/gemm.h"

namespace nvfp4 {
namespace {

std::vector<uint8_t> random_bytes(std::size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  uint64_t x = seed;
  for (std::size_t i = 0; i < n; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(&v[i], &x, std::min<std::size_t>(8, n - i));
  }
  return v;
}

void check_large(Route route, int64_t N, int64_t K) {
  if (!nvh::cuda_unavailable_reason().empty()) {
    GTEST_SKIP() << "needs a CUDA device (" << nvh::cuda_unavailable_reason()
                 << "); the host executor would take many minutes over 2^31 values";
  }
  ASSERT_GT(N * K, int64_t{1} << 31);
  auto gpu = nvh::make_cuda_backend();
  const int64_t M = 9, bs = 16, row_bytes = (K + 1) / 2, scale_cols = (K + bs - 1) / bs;
  std::vector<uint8_t> packed = random_bytes(static_cast<std::size_t>(N * row_bytes), 17);
  std::vector<uint8_t> scales = random_bytes(static_cast<std::size_t>(N * scale_cols), 29);
  for (auto& s : scales) s = static_cast<uint8_t>(0x30 + s % 0x10);  // E4M3 in [0.5, 2)
  std::vector<uint16_t> A(static_cast<std::size_t>(M * K));
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& a : A) a = ref::round_to_half(u(rng), ref::Half::bf16);
  const float g = 1.0f / 64;

  nvh::Buffer dA(*gpu, A.size() * 2), dB(*gpu, packed.size()), dS(*gpu, scales.size()), dg(*gpu, 4),
      dY(*gpu, static_cast<std::size_t>(M * N) * 2),
      scratch(*gpu, static_cast<std::size_t>(N * K) * 2);
  dA.upload(A);
  dB.upload(packed);
  dS.upload(scales);
  dg.upload(&g, 4);
  MatmulArgs args;
  args.A = {dA.data(), {M, K}, ElemType::bf16};
  args.B = {dB.data(), {N, row_bytes}, ElemType::e2m1x2};
  args.weight_scale = {dS.data(), {N, scale_cols}, ElemType::e4m3};
  args.weight_scale_2 = {dg.data(), {}, ElemType::fp32};
  args.Y = {dY.data(), {M, N}, ElemType::bf16};
  args.scratch = {scratch.data(), {N, K}, ElemType::bf16};
  args.block_size = bs;
  const Decision d = run_matmul(*gpu, args);
  gpu->synchronize();
  ASSERT_EQ(d.route, route) << d.detail;

  // Rows around flat index 2^31, and the first and last.
  const int64_t boundary_row = (int64_t{1} << 31) / K;
  for (int64_t row : {int64_t{0}, boundary_row - 1, boundary_row, boundary_row + 1, N - 1}) {
    std::vector<uint16_t> got(static_cast<std::size_t>(K));
    gpu->copy_out(got.data(), scratch.as<uint16_t>() + row * K, got.size() * 2);
    const std::vector<uint16_t> want =
        ref::dequantize(packed.data() + row * row_bytes, scales.data() + row * scale_cols, g, 1, K,
                        bs, ref::Half::bf16);
    ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * 2), 0) << "scratch row " << row;
    // One output that reads the row, against fp64 (the bound of matmul_case.cc with K terms).
    const std::vector<double> ref_y =
        ref::gemm_fp64(A.data(), want.data(), nullptr, M, 1, K, ref::Half::bf16);
    uint16_t got_y;
    gpu->copy_out(&got_y, dY.as<uint16_t>() + (M - 1) * N + row, 2);
    double S = 0;
    for (int64_t k = 0; k < K; ++k) {
      S += std::fabs(ref::half_to_double(A[(M - 1) * K + k], ref::Half::bf16) *
                     ref::half_to_double(want[k], ref::Half::bf16));
    }
    const double bound = std::ldexp(std::fabs(ref_y[M - 1]), -7) + (K + 2) * std::ldexp(S, -23);
    EXPECT_LE(std::fabs(ref::half_to_double(got_y, ref::Half::bf16) - ref_y[M - 1]), bound)
        << "Y row " << row;
  }
}

TEST(LargeProblem, Vec8DequantPast2To31Values) { check_large(Route::prefill_vec8, 32768, 65544); }
TEST(LargeProblem, ScalarDequantPast2To31Values) {
  check_large(Route::prefill_scalar, 32768, 65545);
}

}  // namespace
}  // namespace nvfp4
