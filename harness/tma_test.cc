// The TMA (kernel_ctx.h: mbarrier_arrive_expect_tx, tma_load_2d) on every
// backend: one box of a bf16-sized matrix copied into shared memory and
// written out as it lies there (tma_test_kernel.cuh), at the matrix's
// corner, inside it, and hanging past each edge (zeros), dense and with
// the 128- and 64-byte swizzles. The expected bytes come from the map's rule
// computed here, element by element, not from either backend. Then each
// rule the host executor holds TMA kernels to, broken once; and the map's
// own refusals.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/host_executor.h"
#include "harness/launch.h"
#include "harness/tensor_map.h"
#include "harness/tma_test_kernel.cuh"

namespace nvh {
namespace {

using test_kernels::TmaBox;
using test_kernels::TmaOrder;

constexpr uint32_t kRows = 200, kCols = 96;  // 2-byte elements, rows 96 * 2 + 64 bytes apart
constexpr uint64_t kRowBytes = kCols * 2 + 64;

LaunchShape box_shape() { return LaunchShape{{1, 1, 1}, {128, 1, 1}, TmaBox::kSharedBytes, true}; }

std::vector<uint16_t> matrix() {
  std::vector<uint16_t> m(kRows * kRowBytes / 2);
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<uint16_t>(0x9E37u * (i + 1) >> 3);
  return m;
}

// The box at (col, row) as the TMA lays it in shared memory at a
// 1024-byte aligned address: row r's bytes at r * box_row_bytes, its
// 16-byte chunk c moved to c ^ (r % 8) with the swizzle; zeros past the matrix.
std::vector<uint8_t> expected_box(const std::vector<uint16_t>& m, const TensorMap2d& map,
                                  int32_t col, int32_t row) {
  const uint32_t row_bytes = map.box_row_bytes();
  std::vector<uint8_t> out(map.box_bytes(), 0);
  for (uint32_t r = 0; r < map.box_rows; ++r) {
    for (uint32_t e = 0; e < map.box_cols; ++e) {
      const int64_t gr = int64_t{row} + r, gc = int64_t{col} + e;
      if (gr < 0 || gr >= kRows || gc < 0 || gc >= kCols) continue;
      uint32_t at = r * row_bytes + 2 * e;
      if (map.swizzle == TmaSwizzle::b128) at ^= ((at >> 7) & 7u) << 4;
      if (map.swizzle == TmaSwizzle::b64) at ^= ((at >> 7) & 3u) << 4;
      std::memcpy(&out[at], &m[static_cast<std::size_t>(gr) * kRowBytes / 2 + gc], 2);
    }
  }
  return out;
}

struct Box {
  uint32_t box_rows, box_cols;
  TmaSwizzle swizzle;
  int32_t col, row;
  const char* where;
};

class Tma : public OnBackend {};

TEST_P(Tma, EveryBoxLandsAsTheMapSays) {
  if (GetParam() == "cuda" && backend().caps().sm() < 90) {
    GTEST_SKIP() << "the TMA needs sm_90; this GPU is sm_" << backend().caps().sm();
  }
  const std::vector<uint16_t> m = matrix();
  Buffer src(backend(), m.size() * 2, "matrix"), out(backend(), TmaBox::kMaxBoxBytes, "out");
  src.upload(m.data(), m.size() * 2);
  const Box boxes[] = {
      {128, 64, TmaSwizzle::b128, 0, 0, "corner, swizzled"},
      {128, 64, TmaSwizzle::b128, 24, 40, "inside, swizzled"},
      {128, 64, TmaSwizzle::b128, 64, 100, "past the last column and row, swizzled"},
      {128, 64, TmaSwizzle::b128, -8, -3, "before the first column and row, swizzled"},
      {64, 32, TmaSwizzle::none, 40, 150, "past the last row, dense"},
      {16, 96, TmaSwizzle::none, 0, 7, "whole rows, dense"},
      {128, 32, TmaSwizzle::b64, 8, 16, "inside, 64-byte swizzle"},
      {128, 32, TmaSwizzle::b64, 80, 120, "past the last column and row, 64-byte swizzle"},
  };
  for (const TmaOrder order : {TmaOrder::legal, TmaOrder::copy_then_expect,
                               TmaOrder::legal_streaming, TmaOrder::one_waits_then_barrier}) {
    for (const Box& b : boxes) {
      const TensorMap2d map = make_tensor_map_2d(src.data(), 2, kRows, kCols, kRowBytes, b.box_rows,
                                                 b.box_cols, b.swizzle);
      backend().fill(out.data(), 0xA5, TmaBox::kMaxBoxBytes);
      launch<TmaBox>(backend(), box_shape(), {map, out.as<uint8_t>(), b.col, b.row, order});
      backend().synchronize();
      const std::vector<uint8_t> got = out.download_as<uint8_t>(map.box_bytes());
      const std::vector<uint8_t> want = expected_box(m, map, b.col, b.row);
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size()))
          << b.where << ", order " << static_cast<int>(order);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Tma, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

struct BrokenBox {
  TmaOrder order;
  const char* name;
  std::string says;  // what the failure must say
  int32_t col = 8;   // the box's first column
  // Or this: where the host's turns let a reader run before the copy's
  // issue, the write-after-read check stops the kernel first (the same
  // race seen from the copy's side: TmaShadow).
  std::string or_says = "";
};
void PrintTo(const BrokenBox& b, std::ostream* os) { *os << b.name; }

class HostTmaRule : public ::testing::TestWithParam<BrokenBox> {};

// Each races or hangs on the GPU (a box read before it lands, a phase that
// completes early or never, two copies into the same bytes); the host
// executor stops the kernel and says why.
TEST_P(HostTmaRule, BreakingItFailsTheLaunchNamingIt) {
  auto backend = make_host_backend();
  const std::vector<uint16_t> m = matrix();
  Buffer src(*backend, m.size() * 2, "matrix"), out(*backend, TmaBox::kMaxBoxBytes, "out");
  src.upload(m.data(), m.size() * 2);
  const TensorMap2d map =
      make_tensor_map_2d(src.data(), 2, kRows, kCols, kRowBytes, 128, 64, TmaSwizzle::b128);
  LaunchShape shape = box_shape();
  shape.reads_shared_async = GetParam().order == TmaOrder::wgmma_without_wait;
  try {
    launch_on_host<TmaBox>(shape, {map, out.as<uint8_t>(), GetParam().col, 8, GetParam().order});
    ADD_FAILURE() << "no failure for " << GetParam().name;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.find(GetParam().says) != std::string::npos ||
                (!GetParam().or_says.empty() && what.find(GetParam().or_says) != std::string::npos))
        << what;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Faults, HostTmaRule,
    ::testing::Values(BrokenBox{TmaOrder::no_wait, "ReadWithoutWaiting",
                                "is not ordered after the phase it landed in", 8,
                                "the copy may land before the read"},
                      BrokenBox{TmaOrder::one_waits_no_barrier, "OneWaitsNoBarrier",
                                "is not ordered after the phase it landed in", 8,
                                "the copy may land before the read"},
                      BrokenBox{TmaOrder::expect_too_small, "ExpectTxTooSmall",
                                "16 bytes more than the phase's expect_tx"},
                      BrokenBox{TmaOrder::expect_too_large, "ExpectTxTooLarge",
                                "waits for 16 bytes that no TMA copy brings"},
                      BrokenBox{TmaOrder::expect_too_large_no_wait, "EndsWithACopyInFlight",
                                "ends with TMA copies in flight on the mbarrier"},
                      BrokenBox{TmaOrder::second_copy_in_flight, "SecondCopyInFlight",
                                "while another one into it (on the mbarrier at shared offset"},
                      BrokenBox{TmaOrder::wgmma_without_wait, "WgmmaWithoutWaiting",
                                "a wgmma read of shared offset"},
                      BrokenBox{TmaOrder::legal, "ColumnNotOn16Bytes",
                                "the box starts 6 bytes into its rows, not a multiple of 16", 3}),
    [](const auto& info) { return std::string(info.param.name); });

// The GPU's side of the host's ColumnNotOn16Bytes rule, in its own process
// (a fault leaves the CUDA context unusable): the box at column 3 of 2-byte
// elements, alone. Disabled, so it never counts as a pass; ci/device/
// fused-round.sh's step tma runs it with --gtest_also_run_disabled_tests.
// On the H200 (2026-12-03, the call after 21:15 UTC) it passed: the GPU
// faults on that box, so the host's rule is the hardware's, not stricter.
TEST(TmaOnTheGpu, DISABLED_ABoxOffSixteenBytesFaults) {
  if (!cuda_unavailable_reason().empty()) FAIL() << cuda_unavailable_reason();
  auto gpu = make_cuda_backend();
  const std::vector<uint16_t> m = matrix();
  Buffer src(*gpu, m.size() * 2, "matrix"), out(*gpu, TmaBox::kMaxBoxBytes, "out");
  src.upload(m.data(), m.size() * 2);
  const TensorMap2d map =
      make_tensor_map_2d(src.data(), 2, kRows, kCols, kRowBytes, 64, 32, TmaSwizzle::none);
  try {
    launch<TmaBox>(*gpu, box_shape(), {map, out.as<uint8_t>(), 3, 0, TmaOrder::legal});
    gpu->synchronize();
    ADD_FAILURE() << "the GPU copied a box starting 6 bytes into its rows: the host rule is "
                     "stricter than the hardware";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("cudaErrorIllegalInstruction"), std::string::npos)
        << e.what();
  }
}

// What cuTensorMapEncodeTiled would refuse, refused on every backend with
// the value named.
TEST(TensorMap2d, RefusesWhatTheTmaCannotCopyNamingTheValue) {
  alignas(16) static uint8_t bytes[4096];
  const auto refusal = [](auto make) -> std::string {
    try {
      make();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(accepted)";
  };
  const auto says = [&](const std::string& what, auto make) {
    EXPECT_NE(refusal(make).find(what), std::string::npos) << refusal(make);
  };
  says("base", [&] { make_tensor_map_2d(bytes + 8, 2, 8, 64, 128, 8, 64, TmaSwizzle::none); });
  says("elem_bytes 3", [&] { make_tensor_map_2d(bytes, 3, 8, 64, 192, 8, 16, TmaSwizzle::none); });
  says("rows 0", [&] { make_tensor_map_2d(bytes, 2, 0, 64, 128, 8, 64, TmaSwizzle::none); });
  says("row_bytes 136 is not a multiple of 16",
       [&] { make_tensor_map_2d(bytes, 2, 8, 64, 136, 8, 64, TmaSwizzle::none); });
  says("row_bytes 64 is shorter than a row's 128 bytes",
       [&] { make_tensor_map_2d(bytes, 2, 8, 64, 64, 8, 64, TmaSwizzle::none); });
  says("box_rows 257",
       [&] { make_tensor_map_2d(bytes, 2, 8, 64, 128, 257, 64, TmaSwizzle::none); });
  says("box_cols 4 makes a box row of 8 bytes",
       [&] { make_tensor_map_2d(bytes, 2, 8, 64, 128, 8, 4, TmaSwizzle::none); });
  says("past the 64-byte swizzle's 64",
       [&] { make_tensor_map_2d(bytes, 2, 8, 64, 128, 8, 64, TmaSwizzle::b64); });
  says("past the 128-byte swizzle's 128",
       [&] { make_tensor_map_2d(bytes, 2, 8, 128, 256, 8, 128, TmaSwizzle::b128); });
  EXPECT_EQ(refusal([&] { make_tensor_map_2d(bytes, 2, 8, 64, 128, 8, 64, TmaSwizzle::b128); }),
            "(accepted)");
}

}  // namespace
}  // namespace nvh
