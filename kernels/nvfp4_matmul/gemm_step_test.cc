// The GEMM step's rounding contract on every backend: Y = round(fp32 product
// + bias), one rounding. Inputs are small integers, so every product sum is
// exact in fp32 whatever order an algorithm adds in, and the only freedom
// left is where the rounding happens. The bias has fractional bits, so for a
// good share of outputs rounding the product before adding the bias gives
// other bits (counted, and required to be many, so the test can fail). The
// shapes include the one where cuBLASLt's bias epilogue was caught rounding
// twice (M = 2, N = 7, K = 160) and larger ones where it adds first;
// gemm_step_cuda.cu probes each plan and must pick right either way.
#include "kernels/nvfp4_matmul/gemm_step.h"

#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <random>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/portable_math.h"

namespace nvfp4 {
namespace {

struct GemmShape {
  int64_t M, N, K;
  bool gpu_only;  // too slow for the host loop
};

const GemmShape kShapes[] = {
    {2, 7, 160, false}, {33, 100, 64, false}, {128, 256, 512, false}, {256, 1024, 1024, true}};

class GemmStepRounding : public nvh::OnBackend {};

TEST_P(GemmStepRounding, BiasIsAddedBeforeTheOneRounding) {
  std::mt19937 rng(11);
  for (const DType dtype : {DType::bf16, DType::fp16}) {
    const nvh::HalfKind kind = half_kind(dtype);
    for (const GemmShape& s : kShapes) {
      if (s.gpu_only && GetParam() == "host") continue;
      std::vector<uint16_t> A(static_cast<std::size_t>(s.M * s.K)),
          W(static_cast<std::size_t>(s.N * s.K));
      std::vector<uint16_t> bias(static_cast<std::size_t>(s.N));
      std::vector<float> a(A.size()), w(W.size()), b(bias.size());
      for (std::size_t i = 0; i < A.size(); ++i)
        a[i] = static_cast<float>(static_cast<int>(rng() % 63) - 31);
      for (std::size_t i = 0; i < W.size(); ++i)
        w[i] = static_cast<float>(static_cast<int>(rng() % 63) - 31);
      for (std::size_t i = 0; i < A.size(); ++i) A[i] = nvh::round_to_half_bits(a[i], kind);
      for (std::size_t i = 0; i < W.size(); ++i) W[i] = nvh::round_to_half_bits(w[i], kind);
      for (std::size_t n = 0; n < bias.size(); ++n) {
        bias[n] = nvh::round_to_half_bits(
            static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 37.f, kind);
        b[n] = nvh::half_bits_to_float(bias[n], kind);
      }
      // Expected: the exact sum, then + bias in fp32, then one rounding.
      std::vector<uint16_t> expected(static_cast<std::size_t>(s.M * s.N));
      int64_t differ_if_rounded_twice = 0;
      for (int64_t m = 0; m < s.M; ++m) {
        for (int64_t n = 0; n < s.N; ++n) {
          double sum = 0;  // exact: |sum| <= 31 * 31 * K < 2^24
          for (int64_t k = 0; k < s.K; ++k) sum += double{a[m * s.K + k]} * w[n * s.K + k];
          const float product = static_cast<float>(sum);
          const uint16_t once = nvh::round_to_half_bits(product + b[n], kind);
          const uint16_t twice = nvh::round_to_half_bits(
              nvh::half_bits_to_float(nvh::round_to_half_bits(product, kind), kind) + b[n], kind);
          expected[m * s.N + n] = once;
          differ_if_rounded_twice += once != twice;
        }
      }
      ASSERT_GT(differ_if_rounded_twice, s.M * s.N / 50)
          << "the data would not tell one rounding from two";

      nvh::Buffer dA(backend(), A.size() * 2), dW(backend(), W.size() * 2),
          dB(backend(), bias.size() * 2), dY(backend(), expected.size() * 2);
      dA.upload(A);
      dW.upload(W);
      dB.upload(bias);
      const GemmStepArgs args{dA.data(), dW.data(), dB.data(), dY.data(), s.M, s.N, s.K, dtype};
      run_gemm_step(backend(), args);
      std::cout << "  " << dtype_name(dtype) << " M=" << s.M << " N=" << s.N << " K=" << s.K << ": "
                << gemm_step_variant(backend(), args) << "\n";
      const std::vector<uint16_t> got = dY.download_as<uint16_t>(expected.size());
      EXPECT_EQ(0, std::memcmp(got.data(), expected.data(), got.size() * 2))
          << dtype_name(dtype) << " M=" << s.M << " N=" << s.N << " K=" << s.K;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, GemmStepRounding, ::testing::ValuesIn(nvh::backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nvfp4
