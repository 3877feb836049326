// Blocks that count their arrivals, on every backend: atomic_inc_global's
// old value and wrap, the fences, and load_coherent_f32 give the tile's last
// block every other block's part (last_block_test_kernel.cuh). On the GPU
// this is the hardware's atomics and memory order; on the host, the host
// executor's (blocks on concurrent worker threads).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/last_block_test_kernel.cuh"
#include "harness/launch.h"

namespace nvh {
namespace {

using test_kernels::LastBlockSums;

class LastBlock : public OnBackend {};

TEST_P(LastBlock, TheLastBlockOfEachTileAddsEveryPartAndWrapsItsCounter) {
  constexpr uint32_t kBlocks = 24, kTiles = 3, kThreads = 128;
  const LaunchShape shape{{kBlocks, kTiles, 1}, {kThreads, 1, 1}, 16, true};
  Buffer parts(backend(), std::size_t{kTiles} * kBlocks * kThreads * 4, "parts");
  Buffer out(backend(), std::size_t{kTiles} * kThreads * 4, "out");
  uint32_t* counters = backend().zeroed_counters(kTiles);
  for (int run = 0; run < 3; ++run) {  // the wrapped counters serve the next launch
    backend().fill(out.data(), 0xFF, out.bytes());
    launch<LastBlockSums>(
        backend(), shape,
        {parts.as<float>(), counters, out.as<float>(), test_kernels::SkipFence::none});
    backend().synchronize();
    const std::vector<float> sums = out.download_as<float>(kTiles * kThreads);
    for (uint32_t tile = 0; tile < kTiles; ++tile) {
      for (uint32_t t = 0; t < kThreads; ++t) {
        // sum over b of (b + 1)(t + 1) + tile: exact in fp32 at these sizes
        const float expected =
            static_cast<float>(kBlocks * (kBlocks + 1) / 2 * (t + 1) + kBlocks * tile);
        ASSERT_EQ(sums[tile * kThreads + t], expected)
            << "run " << run << ", tile " << tile << ", thread " << t;
      }
    }
    std::vector<uint32_t> left(kTiles);
    backend().copy_out(left.data(), counters, kTiles * 4);
    for (uint32_t tile = 0; tile < kTiles; ++tile) EXPECT_EQ(left[tile], 0u) << "tile " << tile;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LastBlock, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nvh
