// empty's fill kernel on every backend the build has, at the sizes where its
// grid-stride loop matters: a grid of a multiple of 256 blocks, and a Y past
// the 4096-block cap, where each thread fills more than one element. The
// operator's other tests never reach either (their Y are a few hundred values).
#include "kernels/nvfp4_matmul/empty.cuh"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/launch.h"

namespace nvfp4 {
namespace {

class EmptyFillSizes : public nvh::OnBackend {};

// Y = 0 + bias rounded once: the bias itself, except -0, which becomes +0.
std::vector<uint16_t> expected_fill(const std::vector<uint16_t>& bias, int64_t M) {
  std::vector<uint16_t> y;
  y.reserve(bias.size() * static_cast<std::size_t>(M));
  for (int64_t m = 0; m < M; ++m) {
    for (uint16_t b : bias) y.push_back(b == 0x8000 ? 0 : b);
  }
  return y;
}

TEST_P(EmptyFillSizes, EveryElementIsFilledAtGridStrideSizes) {
  // {M, N}: 256 x 256 is exactly 256 blocks of 256 threads (a stride of
  // grid % block would be 0 there and never end); 1 x (2^20 + 777) is past
  // the 4096-block cap, so threads take a second element one stride on.
  const int64_t shapes[][2] = {{256, 256}, {1, (int64_t{1} << 20) + 777}};
  for (const auto& s : shapes) {
    const int64_t M = s[0], N = s[1];
    std::vector<uint16_t> bias(static_cast<std::size_t>(N));
    // Scattered bf16 bits with the exponent's top bit clear: finite values (a
    // NaN bias would come out as the canonical NaN, not its own bits).
    for (std::size_t n = 0; n < bias.size(); ++n)
      bias[n] = static_cast<uint16_t>((n * 2654435761u >> 7) & 0xBFFFu);
    nvh::Buffer bias_buf(backend(), bias.size() * 2),
        y_buf(backend(), static_cast<std::size_t>(M * N) * 2);
    bias_buf.upload(bias);
    backend().fill(y_buf.data(), 0xEE, y_buf.bytes());
    const EmptyFill::Params p{bias_buf.as<uint16_t>(), y_buf.as<uint16_t>(), M, N,
                              nvh::HalfKind::bf16};
    const nvh::LaunchShape shape = EmptyFill::shape(p);
    nvh::launch<EmptyFill>(backend(), shape, p);
    const std::vector<uint16_t> y = y_buf.download_as<uint16_t>(static_cast<std::size_t>(M * N));
    const std::vector<uint16_t> want = expected_fill(bias, M);
    EXPECT_EQ(0, std::memcmp(y.data(), want.data(), want.size() * 2))
        << "M = " << M << ", N = " << N << ", grid = " << shape.grid.x << " blocks of "
        << shape.block.x;
  }
}

// The launch: one thread per element in blocks of 256, at most 4096 blocks
// (past that the grid-stride loop takes over), never a block with no element.
TEST(EmptyFillShape, OneThreadPerElementUpToTheCap) {
  const int64_t cap = int64_t{4096} * 256;
  const int64_t cases[][2] = {{1, 1},          {256, 1},    {257, 2},
                              {cap - 1, 4096}, {cap, 4096}, {cap + 1, 4096}};
  for (const auto& c : cases) {
    const EmptyFill::Params p{nullptr, nullptr, 1, c[0], nvh::HalfKind::fp16};
    const nvh::LaunchShape s = EmptyFill::shape(p);
    EXPECT_EQ(s.grid.x, static_cast<uint32_t>(c[1])) << "M * N = " << c[0];
    EXPECT_EQ(s.block.x, 256u) << "M * N = " << c[0];
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, EmptyFillSizes, ::testing::ValuesIn(nvh::backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nvfp4
