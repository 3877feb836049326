// Blocks that wait for one another in a co-resident launch
// (LaunchShape::co_resident, wait_global_at_least), on every backend: each
// block of a tile adds its share over every block's part
// (co_resident_test_kernel.cuh), and the counters come back to zero. On the
// GPU this is a cooperative launch; on the host, each block on its own
// worker thread, parked while it waits. The host's rules are broken once
// each: a wait outside a co-resident launch, the block's stores not fenced
// after its barrier by the arriving thread, a read after the wait before a
// fence (after the last atomic, and right after the wait), a wait that no
// block can end, a grid larger than the host holds.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/co_resident_test_kernel.cuh"
#include "harness/host_memcheck.h"
#include "harness/launch.h"

namespace nvh {
namespace {

using test_kernels::CoResidentFault;
using test_kernels::TileShareSums;

constexpr uint32_t kThreads = 96;

LaunchShape tiles(uint32_t blocks, uint32_t tile_count, bool co_resident = true) {
  LaunchShape s{{blocks, tile_count, 1}, {kThreads, 1, 1}, 16, true};  // 16: one mbarrier
  s.co_resident = co_resident;
  return s;
}

struct Launch {
  Backend& backend;
  uint32_t blocks, tile_count;
  Buffer parts, out;
  uint32_t* counters;
  Launch(Backend& b, uint32_t blocks_, uint32_t tiles_)
      : backend(b),
        blocks(blocks_),
        tile_count(tiles_),
        parts(b, std::size_t{tiles_} * blocks_ * kThreads * 4, "parts"),
        out(b, std::size_t{tiles_} * kThreads * 4, "out"),
        counters(b.zeroed_counters(2 * std::size_t{tiles_})) {}
  void run(CoResidentFault fault = CoResidentFault::none, bool co_resident = true) {
    launch<TileShareSums>(backend, tiles(blocks, tile_count, co_resident),
                          {parts.as<float>(), counters, out.as<float>(), fault});
    backend.synchronize();
  }
  // Every thread's sum over the blocks' parts: sum over b of (b + 1)(t + 1)
  // + tile, exact in fp32 at these sizes.
  void expect_tile_sums(const std::string& when) const {
    const std::vector<float> sums = out.download_as<float>(tile_count * kThreads);
    for (uint32_t tile = 0; tile < tile_count; ++tile) {
      for (uint32_t t = 0; t < kThreads; ++t) {
        const float expected =
            static_cast<float>(blocks * (blocks + 1) / 2 * (t + 1) + blocks * tile);
        ASSERT_EQ(sums[tile * kThreads + t], expected)
            << when << "tile " << tile << ", thread " << t;
      }
    }
  }
  // The first `count` counters are back at zero.
  void expect_counters_zero(std::size_t count) const {
    std::vector<uint32_t> left(count);
    backend.copy_out(left.data(), counters, count * 4);
    for (std::size_t c = 0; c < count; ++c) EXPECT_EQ(left[c], 0u) << "counter " << c;
  }
  // Out still holds the 0xFF bytes it was filled with (a NaN no sum is).
  void expect_no_block_ran() const {
    const std::vector<float> untouched = out.download_as<float>(tile_count * kThreads);
    for (float v : untouched) ASSERT_TRUE(v != v) << "a block ran";
  }
};

class CoResident : public OnBackend {};

TEST_P(CoResident, EveryBlockAddsItsShareOverEveryPartAndTheCountersComeBackToZero) {
  constexpr uint32_t kBlocks = 6, kTiles = 4;
  Launch l(backend(), kBlocks, kTiles);
  for (int run = 0; run < 3; ++run) {  // the wrapped counters serve the next launch
    backend().fill(l.out.data(), 0xFF, l.out.bytes());
    l.run();
    l.expect_tile_sums("run " + std::to_string(run) + ", ");
    l.expect_counters_zero(kTiles);
  }
}

// On the GPU the occupancy calculator's count (96 threads a block, no
// shared memory: some tens a multiprocessor), on the host its 1024.
TEST_P(CoResident, AGridTheBackendCannotHoldThrowsNotCoResidentBeforeAnyBlockRuns) {
  Launch l(backend(), 4096, 4);
  backend().fill(l.out.data(), 0xFF, l.out.bytes());
  const std::string m = thrown<NotCoResident>([&] { l.run(); });
  EXPECT_NE(m.find("a co-resident grid"), std::string::npos) << m;
  EXPECT_NE(m.find("16384 blocks"), std::string::npos) << m;
  l.expect_no_block_ran();
}

// A grid that meets twice (a second arrival round on a second counter):
// the blocks still parked from the first round must be woken by the last
// arrival, though that block goes on to park in the second.
TEST_P(CoResident, BlocksThatMeetTwiceGetThroughBothRounds) {
  constexpr uint32_t kBlocks = 5, kTiles = 2;
  Launch l(backend(), kBlocks, kTiles);
  l.run(CoResidentFault::two_rounds);
  l.expect_tile_sums("");
  l.expect_counters_zero(2 * kTiles);
}

INSTANTIATE_TEST_SUITE_P(Backends, CoResident, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

TEST(CoResidentOnHost, AWaitInALaunchThatIsNotCoResidentFails) {
  auto backend = make_host_backend();
  Launch l(*backend, 2, 1);
  const std::string m =
      thrown<std::logic_error>([&] { l.run(CoResidentFault::none, /*co_resident=*/false); });
  EXPECT_NE(m.find("wait_global_at_least in a launch without LaunchShape::co_resident"),
            std::string::npos)
      << m;
}

TEST(CoResidentOnHost, AStoreTheArrivingThreadDidNotFenceAfterTheBarrierIsCaught) {
  auto backend = make_host_backend();
  Launch l(*backend, 3, 1);
  const std::string m = thrown<MemoryViolation>([&] { l.run(CoResidentFault::no_writer_fence); });
  EXPECT_NE(m.find("that no fence_global() of that thread follows, nor one of this thread after "
                   "a block barrier since"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("(\"parts\")"), std::string::npos) << m;
}

// Nothing stored, nothing to publish: an arrival with no fence before it
// is legal (the parts read after it are whatever the buffer held).
TEST(CoResidentOnHost, AnArrivalAfterNoStoreNeedsNoFence) {
  auto backend = make_host_backend();
  Launch l(*backend, 3, 2);
  backend->fill(l.parts.data(), 0, l.parts.bytes());
  EXPECT_NO_THROW(l.run(CoResidentFault::no_parts));
}

TEST(CoResidentOnHost, AReadAfterTheWaitBeforeAFenceIsCaught) {
  auto backend = make_host_backend();
  Launch l(*backend, 3, 1);
  const std::string m = thrown<MemoryViolation>([&] { l.run(CoResidentFault::no_reader_fence); });
  EXPECT_NE(m.find("before any fence_global() of the block after it"), std::string::npos) << m;
  EXPECT_NE(m.find("allocation \"parts\""), std::string::npos) << m;
}

// The fence after the arrival does not cover what the wait then lets the
// thread read: the other blocks' stores are seen only after a fence that
// follows the wait.
TEST(CoResidentOnHost, AReadRightAfterTheWaitIsCaughtThoughTheArrivalWasFenced) {
  auto backend = make_host_backend();
  Launch l(*backend, 3, 1);
  const std::string m = thrown<MemoryViolation>([&] { l.run(CoResidentFault::read_after_wait); });
  EXPECT_NE(m.find("thread (0,0,0)"), std::string::npos) << m;
  EXPECT_NE(m.find("before any fence_global() of the block after it"), std::string::npos) << m;
  EXPECT_NE(m.find("allocation \"parts\""), std::string::npos) << m;
}

TEST(CoResidentOnHost, AWaitNoBlockCanEndIsADeadlockNotAHang) {
  auto backend = make_host_backend();
  Launch l(*backend, 3, 2);
  const std::string m = thrown<std::runtime_error>([&] { l.run(CoResidentFault::wait_too_long); });
  EXPECT_NE(m.find("waits on a global counter that no block will change"), std::string::npos) << m;
  EXPECT_NE(m.find("to reach 4 (it holds"), std::string::npos) << m;
}

// The blocks that finish no longer count: once they have, the one left
// waiting on a counter nothing can change is the grid's deadlock.
TEST(CoResidentOnHost, AWaitLeftAloneAfterTheOtherBlocksFinishedIsADeadlock) {
  auto backend = make_host_backend();
  Launch l(*backend, 3, 1);
  const std::string m =
      thrown<std::runtime_error>([&] { l.run(CoResidentFault::one_waits_too_long); });
  EXPECT_NE(m.find("every live block of the co-resident grid (1) waits on a global counter"),
            std::string::npos)
      << m;
  const std::string counter = memcheck::hex(reinterpret_cast<uintptr_t>(l.counters));
  EXPECT_NE(m.find("block (0,0,0) thread 0 waits for the counter at " + counter +
                   " to reach 6 (it holds 5)"),
            std::string::npos)
      << m;
}

// A block stuck at a barrier of its own after its waits is the block's
// deadlock, named as such, not a wait on a counter (the waits are over).
TEST(CoResidentOnHost, ABlockStuckAfterItsWaitsIsABarrierDeadlock) {
  auto backend = make_host_backend();
  Launch l(*backend, 2, 1);
  const std::string m =
      thrown<std::runtime_error>([&] { l.run(CoResidentFault::stuck_after_wait); });
  EXPECT_NE(m.find("threads wait at a barrier or collective that can never complete"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("global counter"), std::string::npos) << m;
}

TEST(CoResidentOnHost, AGridLargerThanTheHostHoldsThrowsNotCoResidentBeforeRunning) {
  auto backend = make_host_backend();
  Launch l(*backend, 4, 2);
  const uint32_t before = host_co_resident_blocks();
  set_host_co_resident_blocks(7);
  backend->fill(l.out.data(), 0xFF, l.out.bytes());
  const std::string m = thrown<NotCoResident>([&] { l.run(); });
  set_host_co_resident_blocks(before);
  EXPECT_NE(m.find("a co-resident grid (4,2,1) of 8 blocks, where the host executor holds 7"),
            std::string::npos)
      << m;
  l.expect_no_block_ran();
}

TEST(CoResidentOnHost, ACoResidentLaunchWithoutCollectivesIsRefused) {
  LaunchShape s = tiles(2, 1);
  s.uses_collectives = false;
  const std::string m = thrown<std::invalid_argument>([&] {
    launch_on_host<TileShareSums>(s, {nullptr, nullptr, nullptr, {}});
  });
  EXPECT_NE(m.find("co_resident (blocks that wait for one another) needs uses_collectives"),
            std::string::npos)
      << m;
}

}  // namespace
}  // namespace nvh
