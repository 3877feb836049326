// ldmatrix_x4 on every backend against the PTX ISA's fragment layout for
// ldmatrix .m8n8.x4 .b16 ("Warp-level matrix load instruction: ldmatrix"):
// each lane receives one register per matrix, lane l holding row l / 4,
// elements 2 (l % 4) and 2 (l % 4) + 1 (the lower one in the low half);
// with .trans the matrix is transposed first, so the pair is column l / 4,
// rows 2 (l % 4) and + 1. On the GPU that is the hardware; on the host, the
// host executor's emulation, which an mma kernel's A or B operands would
// come through.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/host_executor.h"
#include "harness/launch.h"
#include "harness/ldmatrix_test_kernel.cuh"

namespace nvh {
namespace {

using test_kernels::LdmatrixRows;

uint32_t pair(uint16_t lo, uint16_t hi) { return uint32_t{lo} | uint32_t{hi} << 16; }

class Ldmatrix : public OnBackend {};

// Rows 48 bytes apart and matrices 400 apart (not a packed 8 x 8 tile):
// each lane's own row address is what is read, not a computed one.
TEST_P(Ldmatrix, EveryLaneGetsThePtxFragmentOfEachMatrixPlainAndTransposed) {
  constexpr uint32_t kRowStride = 48, kMatrixStride = 400, kShared = 4 * kMatrixStride;
  Buffer out(backend(), 32 * 8 * 4, "out");
  launch<LdmatrixRows>(backend(), LaunchShape{{1, 1, 1}, {32, 1, 1}, kShared, true},
                       {out.as<uint32_t>(), kRowStride, kMatrixStride, 32, 0});
  backend().synchronize();
  const std::vector<uint32_t> got = out.download_as<uint32_t>(32 * 8);
  for (uint32_t l = 0; l < 32; ++l) {
    for (uint32_t i = 0; i < 4; ++i) {
      const uint32_t plain = pair(LdmatrixRows::value(i, l / 4, 2 * (l % 4)),
                                  LdmatrixRows::value(i, l / 4, 2 * (l % 4) + 1));
      const uint32_t transposed = pair(LdmatrixRows::value(i, 2 * (l % 4), l / 4),
                                       LdmatrixRows::value(i, 2 * (l % 4) + 1, l / 4));
      EXPECT_EQ(got[8 * l + i], plain) << "lane " << l << ", matrix " << i;
      EXPECT_EQ(got[8 * l + 4 + i], transposed) << "lane " << l << ", matrix " << i << ", .trans";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Ldmatrix, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

// A row address that is not 16-byte aligned, or past the block's shared
// memory, fails on the host executor naming the lane that gave it.
TEST(HostLdmatrix, ARowAddressTheGpuWouldFaultOnIsNamed) {
  auto backend = make_host_backend();
  Buffer out(*backend, 32 * 8 * 4, "out");
  const LaunchShape shape{{1, 1, 1}, {32, 1, 1}, 4 * 128, true};
  for (auto [offset, problem] :
       {std::pair<int32_t, std::string>{8, "misaligned"}, {4 * 128, "out of bounds"}}) {
    try {
      launch_on_host<LdmatrixRows>(shape, {out.as<uint32_t>(), 16, 128, 13, offset});
      ADD_FAILURE() << "no violation for a row offset of " << offset;
    } catch (const MemoryViolation& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("thread (13,0,0)"), std::string::npos) << m;
      EXPECT_NE(m.find("16-byte load"), std::string::npos) << m;
      EXPECT_NE(m.find(problem), std::string::npos) << m;
    }
  }
}

}  // namespace
}  // namespace nvh
