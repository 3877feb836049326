// BiasRound runs only in the GPU's GEMM step (gemm_step_cuda.cu; the host
// backend's GEMM step is its own loop), so no operator case reaches it on the
// host. Its body runs here on the host executor instead, past its row cap:
// rows beyond kMaxGridRows come from the grid-stride loop, and every output
// is the fp32 accumulator plus the bias, rounded once.
#include "kernels/nvfp4_matmul/bias_round.cuh"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "harness/backend.h"
#include "harness/host_executor.h"

namespace nvfp4 {
namespace {

void check_rows_past_the_cap(bool with_bias) {
  const int64_t M = BiasRound::kMaxGridRows + 2, N = 3;
  std::vector<float> acc(static_cast<std::size_t>(M * N));
  // Sums with a fraction fp16 cannot hold (1/8192), so a row the loop skips
  // or rounds twice shows.
  for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = static_cast<float>(i % 1000) + 1.0f / 8192;
  const std::vector<uint16_t> bias = {nvh::round_to_half_bits(0.75f, nvh::HalfKind::fp16),
                                      nvh::round_to_half_bits(-2.5f, nvh::HalfKind::fp16),
                                      nvh::round_to_half_bits(1.0f / 3, nvh::HalfKind::fp16)};
  std::vector<uint16_t> Y(acc.size(), 0xFFFF), expected(acc.size());
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      const float b = with_bias ? nvh::half_bits_to_float(bias[n], nvh::HalfKind::fp16) : 0.0f;
      expected[m * N + n] = nvh::round_to_half_bits(acc[m * N + n] + b, nvh::HalfKind::fp16);
    }
  }
  // Backend memory: the host executor checks every access against it.
  const std::unique_ptr<nvh::Backend> host = nvh::make_host_backend();
  nvh::Buffer acc_mem(*host, acc.size() * 4, "acc"), bias_mem(*host, bias.size() * 2, "bias"),
      y_mem(*host, Y.size() * 2, "Y");
  acc_mem.upload(acc);
  bias_mem.upload(bias);
  y_mem.upload(Y);
  const BiasRound::Params p{acc_mem.as<float>(),
                            with_bias ? bias_mem.as<uint16_t>() : nullptr,
                            y_mem.as<uint16_t>(),
                            M,
                            N,
                            nvh::HalfKind::fp16};
  const nvh::LaunchShape shape = BiasRound::shape(p);
  ASSERT_EQ(shape.grid.y, BiasRound::kMaxGridRows);
  ASSERT_GT(M, int64_t{shape.grid.y});
  nvh::launch_on_host<BiasRound>(shape, p);
  Y = y_mem.download_as<uint16_t>(Y.size());
  for (int64_t m : {int64_t{0}, int64_t{BiasRound::kMaxGridRows} - 1,
                    int64_t{BiasRound::kMaxGridRows}, M - 1}) {
    EXPECT_EQ(std::memcmp(&Y[m * N], &expected[m * N], N * 2), 0) << "row " << m;
  }
  EXPECT_EQ(std::memcmp(Y.data(), expected.data(), Y.size() * 2), 0);
}

// The launch: one thread per column in blocks of 256, never a block with no
// column (an idle block is a wasted launch slot on every row), and one grid
// row per output row up to CUDA's 65535, past which the loop takes over.
TEST(BiasRoundShape, OneThreadPerColumnAndOneGridRowPerRowUpToTheCap) {
  const int64_t cases[][4] = {
      // N, M, expected grid.x, expected grid.y
      {1, 1, 1, 1},           {255, 2, 1, 2},           {256, 3, 1, 3},          {257, 1, 2, 1},
      {512, 65535, 2, 65535}, {4096, 65536, 16, 65535}, {4097, 70000, 17, 65535}};
  for (const auto& c : cases) {
    const BiasRound::Params p{nullptr, nullptr, nullptr, c[1], c[0], nvh::HalfKind::fp16};
    const nvh::LaunchShape s = BiasRound::shape(p);
    EXPECT_EQ(s.grid.x, static_cast<uint32_t>(c[2])) << "N = " << c[0];
    EXPECT_EQ(s.grid.y, static_cast<uint32_t>(c[3])) << "M = " << c[1];
    EXPECT_EQ(s.block.x, 256u) << "N = " << c[0];
  }
}

TEST(BiasRound, RowsPastTheGridCapWithBias) { check_rows_past_the_cap(true); }
TEST(BiasRound, RowsPastTheGridCapWithoutBias) { check_rows_past_the_cap(false); }

}  // namespace
}  // namespace nvfp4
