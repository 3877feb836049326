#include "harness/backend.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace nvh {
namespace {

TEST(HostBackend, AllocationsAre256ByteAligned) {
  auto b = make_host_backend();
  for (std::size_t n : {1u, 3u, 255u, 4096u}) {
    Buffer buf(*b, n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buf.data()) % 256, 0u) << n;
  }
}

TEST(HostBackend, RoundTripsBytes) {
  auto b = make_host_backend();
  std::vector<uint8_t> in(1000);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 13);
  Buffer buf(*b, in.size());
  buf.upload(in);
  EXPECT_EQ(buf.download_as<uint8_t>(in.size()), in);
  EXPECT_THROW(buf.upload(in.data(), in.size() + 1), std::invalid_argument);
}

TEST(GuardedBuffer, DetectsWritesOnEitherSide) {
  auto b = make_host_backend();
  for (std::size_t offset : {0u, 1u, 6u}) {
    GuardedBuffer g(*b, 100, offset);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(g.data()) % 256, offset);
    std::memset(g.data(), 0, 100);
    EXPECT_EQ(g.damaged_guard_bytes(), 0u);
    g.as<uint8_t>()[100] ^= 1;  // one past the end
    EXPECT_EQ(g.damaged_guard_bytes(), 1u);
    g.as<uint8_t>()[-1] ^= 1;  // one before the start
    EXPECT_EQ(g.damaged_guard_bytes(), 2u);
  }
}

TEST(Backends, BestIsTheGpuWhenOneIsUsable) {
  const std::string why = cuda_unavailable_reason();
  auto best = make_best_backend();
  if (why.empty()) {
    EXPECT_EQ(best->kind(), BackendKind::cuda);
  } else {
    EXPECT_EQ(best->kind(), BackendKind::host) << why;
    EXPECT_THROW(make_cuda_backend(), BackendUnavailable);
  }
  EXPECT_EQ(make_available_backends().front()->kind(), BackendKind::host);
}

}  // namespace
}  // namespace nvh

namespace nvh {
namespace {

// ctest --resource-spec-file: the GPU a test was given, by the spec files' ids.
TEST(CtestResources, TheAssignedGpuIsTheIdCtestGave) {
  EXPECT_FALSE(ctest_assigned_gpu(nullptr).has_value());
  EXPECT_EQ(ctest_assigned_gpu("id:0,slots:1"), 0);
  EXPECT_EQ(ctest_assigned_gpu("id:1,slots:1"), 1);
  EXPECT_EQ(ctest_assigned_gpu("id:7"), 7);
  for (const char* bad : {"", "slots:1,id:0", "id:,slots:1", "id:gpu0,slots:1", "id:-1,slots:1"}) {
    try {
      ctest_assigned_gpu(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(
                    std::string("ctest_assigned_gpu: CTEST_RESOURCE_GROUP_0_GPUS = ") + bad + ": "),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace nvh
