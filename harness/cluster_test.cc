// Thread-block clusters (LaunchShape::cluster, cluster_sync,
// map_shared_rank), on every backend: each block adds the parts its
// cluster's blocks hold in shared memory, in rank order
// (cluster_test_kernel.cuh). On the GPU a clustered launch (sm_90); on the
// host a cluster's blocks take turns on one worker thread. The host's rules
// are broken once each: a read of another block's shared memory before the
// barrier that orders its writes, a block that may exit before the others
// have read it, a write over what another block read, a remote store, a
// barrier one thread never reaches, a rank past the cluster, and shapes a
// GPU refuses.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/cluster_test_kernel.cuh"
#include "harness/host_memcheck.h"
#include "harness/launch.h"

namespace nvh {
namespace {

using test_kernels::ClusterFault;
using test_kernels::ClusterSums;

constexpr uint32_t kThreads = 96;

// 1024 bytes of shared memory a block (the parts take 384): on the host a
// cluster's blocks then sit end to end, each starting where the one before
// ends, which the checker must still tell apart.
LaunchShape clusters(uint32_t count, uint32_t blocks_each) {
  LaunchShape s{{count * blocks_each, 1, 1}, {kThreads, 1, 1}, 1024, true};
  s.cluster = {blocks_each, 1, 1};
  return s;
}

struct Launch {
  Backend& backend;
  uint32_t count, blocks_each;
  Buffer out;
  Launch(Backend& b, uint32_t count_, uint32_t blocks_each_)
      : backend(b),
        count(count_),
        blocks_each(blocks_each_),
        out(b, std::size_t{count_} * blocks_each_ * kThreads * 4, "out") {
    backend.fill(out.data(), 0xFF, out.bytes());  // a NaN no sum is
  }
  void run(ClusterFault fault = ClusterFault::none) {
    run_shape(clusters(count, blocks_each), fault);
  }
  void run_shape(const LaunchShape& s, ClusterFault fault = ClusterFault::none) {
    launch<ClusterSums>(backend, s, {out.as<float>(), blocks_each, fault});
    backend.synchronize();
  }
  // Block b (rank r of cluster c), thread t: the parts at t over the
  // cluster's ranks, then its own block's part at t + 1 (exact in fp32).
  void expect_sums() const {
    const std::vector<float> sums = out.download_as<float>(count * blocks_each * kThreads);
    for (uint32_t b = 0; b < count * blocks_each; ++b) {
      const uint32_t c = b / blocks_each, r = b % blocks_each;
      for (uint32_t t = 0; t < kThreads; ++t) {
        float expected = 0.0f;
        for (uint32_t q = 0; q < blocks_each; ++q) expected += ClusterSums::part_value(c, q, t);
        expected += ClusterSums::part_value(c, r, (t + 1) % kThreads);
        ASSERT_EQ(sums[b * kThreads + t], expected) << "block " << b << ", thread " << t;
      }
    }
  }
};

// The message of the host executor's failure (an exception of type E) on
// one cluster of `blocks_each` blocks broken by `fault`.
template <class E>
std::string host_failure(ClusterFault fault, uint32_t blocks_each) {
  auto backend = make_host_backend();
  Launch l(*backend, 1, blocks_each);
  return thrown<E>([&] { l.run(fault); });
}

class Cluster : public OnBackend {};

TEST_P(Cluster, EveryBlockAddsThePartsOfItsClusterInRankOrder) {
  for (uint32_t blocks_each : {2u, 4u, 8u}) {
    SCOPED_TRACE("clusters of " + std::to_string(blocks_each));
    Launch l(backend(), 3, blocks_each);
    l.run();
    l.expect_sums();
  }
}

// A launch without clusters is a cluster of one: its barrier the block's,
// rank 0 its own shared memory.
TEST_P(Cluster, AGridWithoutClustersIsClustersOfOne) {
  Launch l(backend(), 5, 1);
  l.run();
  l.expect_sums();
}

INSTANTIATE_TEST_SUITE_P(Backends, Cluster, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

TEST(ClusterOnHost, AReadBeforeTheBarrierThatOrdersTheOwnersWritesIsCaught) {
  const std::string m = host_failure<MemoryViolation>(ClusterFault::read_before_sync, 2);
  // Rank 0 takes its turn first here: its read of rank 1's bytes comes
  // before rank 1 writes them, so the write is what fails, naming the read.
  EXPECT_NE(m.find("a write over shared bytes block (0,0,0) (the cluster's rank 0) read since "
                   "the last cluster_sync()"),
            std::string::npos)
      << m;
}

TEST(ClusterOnHost, ABlockThatMayExitBeforeTheOthersReadItIsCaught) {
  const std::string m = host_failure<MemoryViolation>(ClusterFault::exit_before_reads, 2);
  // Rank 1's last thread to arrive at the first barrier goes on at once,
  // reads rank 0's parts and exits; rank 0 then exits after that read.
  EXPECT_NE(m.find("block (0,0,0) (the cluster's rank 0) exits while block (1,0,0) (the "
                   "cluster's rank 1) may still read its shared memory"),
            std::string::npos)
      << m;
}

TEST(ClusterOnHost, AReadOfABlockThatHasExitedIsCaught) {
  const std::string m = host_failure<MemoryViolation>(ClusterFault::read_after_exit, 2);
  EXPECT_NE(m.find("block (1,0,0): 4-byte load"), std::string::npos) << m;
  EXPECT_NE(m.find("a read of the shared memory of block (0,0,0) (the cluster's rank 0), which "
                   "has exited"),
            std::string::npos)
      << m;
}

TEST(ClusterOnHost, AWriteOverBytesAnotherBlockReadIsCaught) {
  const std::string m = host_failure<MemoryViolation>(ClusterFault::overwrite_after_read, 4);
  // Rank 3's last thread to arrive at the barrier goes on at once and reads
  // rank 0's parts; rank 0, taking its turn after, overwrites them.
  EXPECT_NE(m.find("a write over shared bytes block (3,0,0) (the cluster's rank 3) read since "
                   "the last cluster_sync()"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("block (0,0,0): 4-byte store"), std::string::npos) << m;
}

TEST(ClusterOnHost, AStoreToAnotherBlocksSharedMemoryIsNotEmulated) {
  const std::string m = host_failure<MemoryViolation>(ClusterFault::remote_store, 2);
  EXPECT_NE(m.find("4-byte store"), std::string::npos) << m;
  EXPECT_NE(m.find("which the host executor does not emulate"), std::string::npos) << m;
  // Rank 1's last thread to arrive goes on at once and stores into rank 0's.
  EXPECT_NE(m.find("block (1,0,0): 4-byte store"), std::string::npos) << m;
  EXPECT_NE(m.find("in allocation \"shared memory of block (0,0,0), the cluster's rank 0\""),
            std::string::npos)
      << m;
}

TEST(ClusterOnHost, AMisalignedLoadOfAnotherBlocksSharedMemoryIsCaught) {
  const std::string m = host_failure<MemoryViolation>(ClusterFault::misaligned_remote, 2);
  EXPECT_NE(m.find("4-byte load"), std::string::npos) << m;
  EXPECT_NE(m.find("is misaligned"), std::string::npos) << m;
}

TEST(ClusterOnHost, AGlobalOnlyLoadOfAnotherBlocksSharedMemoryIsCaught) {
  const std::string m = host_failure<MemoryViolation>(ClusterFault::remote_global_only, 2);
  EXPECT_NE(m.find("in another block's shared memory, which only generic loads reach"),
            std::string::npos)
      << m;
}

TEST(ClusterOnHost, ABarrierAThreadNeverReachesIsADeadlockNotAHang) {
  const std::string m = host_failure<std::runtime_error>(ClusterFault::one_thread_exits, 2);
  EXPECT_NE(m.find("the cluster of blocks (0,0,0) to (1,0,0)"), std::string::npos) << m;
  EXPECT_NE(m.find("191 of the cluster's 192 threads wait at cluster_sync"), std::string::npos)
      << m;
}

TEST(ClusterOnHost, ARankPastTheClusterFails) {
  const std::string m = host_failure<std::logic_error>(ClusterFault::map_past_cluster, 4);
  EXPECT_NE(m.find("map_shared_rank to rank 4 of a cluster of 4 blocks"), std::string::npos) << m;
}

TEST(ClusterOnHost, ShapesAGpuRefusesAreRefused) {
  auto backend = make_host_backend();
  Launch l(*backend, 1, 4);
  LaunchShape uneven = clusters(1, 4);
  uneven.grid.x = 6;
  LaunchShape nine = clusters(1, 9);
  LaunchShape plain = clusters(1, 4);
  plain.uses_collectives = false;
  LaunchShape waiting = clusters(1, 4);
  waiting.co_resident = true;
  const struct {
    const LaunchShape& shape;
    const char* says;
  } cases[] = {
      {uneven, "cluster (4,1,1): each extent must be positive and divide the grid's"},
      {nine, "cluster (9,1,1): each extent must be positive and divide the grid's, 8 blocks"},
      {plain, "a cluster (blocks that meet at cluster_sync) needs uses_collectives"},
      {waiting, "co_resident and cluster together are not emulated"},
  };
  for (const auto& c : cases) {
    const std::string m = thrown<std::invalid_argument>([&] { l.run_shape(c.shape); });
    EXPECT_NE(m.find(c.says), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace nvh
