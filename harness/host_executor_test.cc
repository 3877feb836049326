#include "harness/host_executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "harness/portable_math.h"

namespace nvh {
namespace {

uint64_t global_thread_id(const HostCtx& c) {
  const Dim3 t = c.thread_idx(), b = c.block_idx(), bd = c.block_dim(), gd = c.grid_dim();
  const uint64_t block = b.x + uint64_t{gd.x} * (b.y + uint64_t{gd.y} * b.z);
  const uint64_t thread = t.x + uint64_t{bd.x} * (t.y + uint64_t{bd.y} * t.z);
  return block * (uint64_t{bd.x} * bd.y * bd.z) + thread;
}

TEST(HostExecutor, PlainGridRunsEveryThreadOnce) {
  LaunchShape s{{3, 2, 2}, {5, 3, 2}, 0, false};
  std::vector<std::atomic<int>> hits(total_blocks(s) * threads_per_block(s));
  run_grid_on_host(s, [&](HostCtx& c) { hits[global_thread_id(c)]++; });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(HostExecutor, FiberGridRunsEveryThreadOnce) {
  LaunchShape s{{4, 3, 1}, {40, 2, 1}, 0, true};
  std::vector<std::atomic<int>> hits(total_blocks(s) * threads_per_block(s));
  run_grid_on_host(s, [&](HostCtx& c) {
    c.sync_threads();
    hits[global_thread_id(c)]++;
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

// A HostGridLog holds the grids run while it lives, in order, each named;
// one at a time; none after it is gone.
TEST(HostExecutor, AGridLogHoldsTheGridsRunWhileItLives) {
  const LaunchShape one{{3, 1, 1}, {32, 1, 1}, 0, false};
  LaunchShape two{{2, 1, 4}, {64, 1, 1}, 0, true};
  two.cluster = {1, 1, 2};
  const auto nothing = [](HostCtx&) {};
  {
    HostGridLog log;
    run_grid_on_host(one, nothing, "first");
    run_grid_on_host(two, nothing, "second");
    EXPECT_THROW(HostGridLog(), std::logic_error);
    const std::vector<HostGrid> grids = log.grids();
    ASSERT_EQ(grids.size(), 2u);
    EXPECT_EQ(grids[0].kernel, "first");
    EXPECT_EQ(grids[0].grid.x, 3u);
    EXPECT_EQ(grids[1].kernel, "second");
    EXPECT_EQ(grids[1].grid.z, 4u);
    EXPECT_EQ(grids[1].cluster.z, 2u);
  }
  run_grid_on_host(one, nothing, "unlogged");
  HostGridLog later;
  EXPECT_TRUE(later.grids().empty());
}

TEST(HostExecutor, ShuffleXorButterflySumsTheWarp) {
  LaunchShape s{{2, 1, 1}, {64, 1, 1}, 0, true};
  std::vector<uint32_t> out(128);
  run_grid_on_host(s, [&](HostCtx& c) {
    uint32_t v = c.thread_idx().x + 1000 * c.block_idx().x;
    for (int m = 16; m >= 1; m /= 2) v += c.shfl_xor(v, m);
    out[c.block_idx().x * 64 + c.thread_idx().x] = v;
  });
  for (uint32_t b = 0; b < 2; ++b) {
    for (uint32_t t = 0; t < 64; ++t) {
      const uint32_t w0 = (t / 32) * 32;
      uint32_t expect = 0;
      for (uint32_t l = 0; l < 32; ++l) expect += w0 + l + 1000 * b;
      EXPECT_EQ(out[b * 64 + t], expect) << "block " << b << " thread " << t;
    }
  }
}

TEST(HostExecutor, ShuffleIdxBroadcastsAndFloatsKeepTheirBits) {
  LaunchShape s{{1, 1, 1}, {32, 1, 1}, 0, true};
  std::vector<float> out(32);
  run_grid_on_host(s, [&](HostCtx& c) {
    const float mine = c.lane() == 7 ? -0.0f : static_cast<float>(c.lane());
    out[c.lane()] = c.shfl_idx(mine, 7);
  });
  for (float v : out) EXPECT_EQ(float_to_bits(v), 0x80000000u);
}

TEST(HostExecutor, PartialLastWarpShufflesAmongItsLiveLanes) {
  LaunchShape s{{1, 1, 1}, {48, 1, 1}, 0, true};
  std::vector<uint32_t> out(48);
  run_grid_on_host(s, [&](HostCtx& c) {
    uint32_t v = 1;
    for (int m = 8; m >= 1; m /= 2) v += c.shfl_xor(v, m);  // within groups of 16
    out[c.thread_idx().x] = v;
  });
  for (uint32_t v : out) EXPECT_EQ(v, 16u);
}

TEST(HostExecutor, ShuffleFromAnInactiveLaneIsAnError) {
  LaunchShape s{{1, 1, 1}, {40, 1, 1}, 0, true};
  EXPECT_THROW(run_grid_on_host(s, [&](HostCtx& c) { c.shfl_xor(1u, 16); }), std::logic_error);
}

TEST(HostExecutor, BarrierOrdersSharedMemory) {
  LaunchShape s{{3, 1, 1}, {128, 1, 1}, 128 * sizeof(int), true};
  std::vector<int> out(3 * 128);
  run_grid_on_host(s, [&](HostCtx& c) {
    int* sh = c.shared_mem<int>();
    const uint32_t t = c.thread_idx().x;
    sh[t] = static_cast<int>(t * 3 + c.block_idx().x);
    c.sync_threads();
    out[c.block_idx().x * 128 + t] = sh[(t + 1) % 128];
  });
  for (uint32_t b = 0; b < 3; ++b) {
    for (uint32_t t = 0; t < 128; ++t) {
      EXPECT_EQ(out[b * 128 + t], static_cast<int>(((t + 1) % 128) * 3 + b));
    }
  }
}

TEST(HostExecutor, ExitedThreadsDoNotHoldABarrier) {
  LaunchShape s{{1, 1, 1}, {64, 1, 1}, 0, true};
  std::atomic<int> after{0};
  run_grid_on_host(s, [&](HostCtx& c) {
    if (c.thread_idx().x % 2) return;
    c.sync_threads();
    after++;
  });
  EXPECT_EQ(after.load(), 32);
}

TEST(HostExecutor, MismatchedCollectivesAreReportedAsDeadlock) {
  LaunchShape s{{1, 1, 1}, {32, 1, 1}, 0, true};
  try {
    run_grid_on_host(s, [&](HostCtx& c) {
      if (c.lane() < 16) {
        c.shfl_xor(1u, 1);
      } else {
        c.sync_threads();
      }
    });
    FAIL() << "expected a deadlock report";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("can never complete"), std::string::npos) << e.what();
  }
}

TEST(HostExecutor, CollectiveWithoutDeclaringItIsAnError) {
  LaunchShape s{{1, 1, 1}, {32, 1, 1}, 0, false};
  EXPECT_THROW(run_grid_on_host(s, [&](HostCtx& c) { c.sync_threads(); }), std::logic_error);
}

TEST(HostExecutor, ExceptionsFromThreadsPropagate) {
  for (bool fibers : {false, true}) {
    LaunchShape s{{8, 1, 1}, {64, 1, 1}, 0, fibers};
    EXPECT_THROW(run_grid_on_host(s,
                                  [&](HostCtx& c) {
                                    if (c.block_idx().x == 5 && c.thread_idx().x == 33)
                                      throw std::domain_error("planted");
                                    if (fibers) c.sync_threads();
                                  }),
                 std::domain_error);
  }
}

TEST(HostExecutor, RejectsShapesTheGpuWouldRefuse) {
  const auto noop = [](HostCtx&) {};
  EXPECT_THROW(run_grid_on_host({{0, 1, 1}, {32, 1, 1}, 0, false}, noop), std::invalid_argument);
  EXPECT_THROW(run_grid_on_host({{1, 1, 1}, {0, 1, 1}, 0, false}, noop), std::invalid_argument);
  EXPECT_THROW(run_grid_on_host({{1, 65536, 1}, {32, 1, 1}, 0, false}, noop),
               std::invalid_argument);
  EXPECT_THROW(run_grid_on_host({{1, 1, 1}, {1025, 1, 1}, 0, false}, noop), std::invalid_argument);
}

TEST(HostExecutor, ManyWorkerThreadsGiveTheSameResult) {
  LaunchShape s{{97, 1, 1}, {64, 1, 1}, 0, true};
  const auto run = [&] {
    std::vector<uint32_t> out(97 * 64);
    run_grid_on_host(s, [&](HostCtx& c) {
      uint32_t v = c.thread_idx().x * 7 + c.block_idx().x;
      for (int m = 1; m < 32; m *= 2) v ^= c.shfl_xor(v, m) * 3;
      out[c.block_idx().x * 64 + c.thread_idx().x] = v;
    });
    return out;
  };
  setenv("NVFP4_HOST_THREADS", "1", 1);
  const auto one = run();
  setenv("NVFP4_HOST_THREADS", "8", 1);
  const auto eight = run();
  unsetenv("NVFP4_HOST_THREADS");
  EXPECT_EQ(one, eight);
}

TEST(HostExecutor, BadThreadCountVariableIsNamed) {
  setenv("NVFP4_HOST_THREADS", "zero", 1);
  try {
    host_executor_threads();
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("NVFP4_HOST_THREADS = zero"), std::string::npos);
  }
  unsetenv("NVFP4_HOST_THREADS");
}

// The mma emulation against a plain 16x16 by 16x8 product, with small
// integers so every sum is exact and the comparison can be bitwise.
TEST(HostExecutor, MmaFragmentsFollowThePtxLayout) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-8, 8);
  for (HalfKind kind : {HalfKind::fp16, HalfKind::bf16}) {
    float A[16][16], B[16][8], C[16][8];
    for (auto& row : A)
      for (float& v : row) v = static_cast<float>(small(rng));
    for (auto& row : B)
      for (float& v : row) v = static_cast<float>(small(rng));
    for (auto& row : C)
      for (float& v : row) v = static_cast<float>(small(rng));
    const auto h = [&](float v) { return uint32_t{round_to_half_bits(v, kind)}; };
    float D[16][8];
    run_grid_on_host({{1, 1, 1}, {32, 1, 1}, 0, true}, [&](HostCtx& c) {
      const int g = static_cast<int>(c.lane() / 4), t = static_cast<int>(c.lane() % 4);
      uint32_t a[4], b[2];
      for (int r = 0; r < 4; ++r) {
        const int row = g + (r % 2) * 8, col = 2 * t + (r / 2) * 8;
        a[r] = h(A[row][col]) | (h(A[row][col + 1]) << 16);
      }
      for (int r = 0; r < 2; ++r) {
        const int k = 2 * t + r * 8;
        b[r] = h(B[k][g]) | (h(B[k + 1][g]) << 16);
      }
      const float cin[4] = {C[g][2 * t], C[g][2 * t + 1], C[g + 8][2 * t], C[g + 8][2 * t + 1]};
      float d[4];
      c.mma_m16n8k16(d, a, b, cin, kind);
      D[g][2 * t] = d[0];
      D[g][2 * t + 1] = d[1];
      D[g + 8][2 * t] = d[2];
      D[g + 8][2 * t + 1] = d[3];
    });
    for (int i = 0; i < 16; ++i) {
      for (int j = 0; j < 8; ++j) {
        float expect = C[i][j];
        for (int k = 0; k < 16; ++k) expect += A[i][k] * B[k][j];
        EXPECT_EQ(D[i][j], expect) << "row " << i << " col " << j;
      }
    }
  }
}

TEST(HostExecutor, MmaNeedsTheWholeWarp) {
  EXPECT_THROW(run_grid_on_host({{1, 1, 1}, {16, 1, 1}, 0, true},
                                [&](HostCtx& c) {
                                  uint32_t a[4] = {}, b[2] = {};
                                  float cc[4] = {}, d[4];
                                  c.mma_m16n8k16(d, a, b, cc, HalfKind::fp16);
                                }),
               std::logic_error);
}

}  // namespace
}  // namespace nvh
