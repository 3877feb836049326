// The warpgroup mma (kernel_ctx.h) on every backend against the layouts
// device_ctx.cuh gives for wgmma.mma_async.m64n128k16 (A from registers in
// each warp's m16n8k16 A fragment layout, B from shared memory 128-byte
// swizzled and K-major, accumulators as the PTX ISA's wgmma D fragment):
// on the GPU (sm_90a) that is the hardware, on the host the executor's
// emulation. Then each rule the host executor enforces, broken once.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/host_executor.h"
#include "harness/launch.h"
#include "harness/wgmma_test_kernel.cuh"

namespace nvh {
namespace {

using test_kernels::WgmmaTile;
using Fault = WgmmaTile::Fault;

class Wgmma : public OnBackend {};

TEST_P(Wgmma, EveryThreadHoldsItsPartOfABInBothKinds) {
  if (GetParam() == "cuda" && backend().caps().sm() != 90) {
    GTEST_SKIP() << "wgmma needs sm_90a; this GPU is sm_" << backend().caps().sm();
  }
  // The tile fenced and met at a barrier, or handed over by an mbarrier.
  for (auto [kind, fault] :
       {std::pair{HalfKind::fp16, Fault::none}, std::pair{HalfKind::bf16, Fault::none},
        std::pair{HalfKind::bf16, Fault::handed_over},
        std::pair{HalfKind::fp16, Fault::fenced_then_handed_over}}) {
    Buffer out(backend(), WgmmaTile::kRows * WgmmaTile::kCols * 4, "out");
    launch<WgmmaTile>(backend(), WgmmaTile::shape(), {out.as<float>(), kind, fault});
    backend().synchronize();
    const std::vector<float> got = out.download_as<float>(WgmmaTile::kRows * WgmmaTile::kCols);
    int wrong = 0;
    for (int row = 0; row < WgmmaTile::kRows; ++row) {
      for (int col = 0; col < WgmmaTile::kCols; ++col) {
        float want = 0.0f;  // exact: small integers
        for (int k = 0; k < WgmmaTile::kK; ++k)
          want += WgmmaTile::a_value(row, k) * WgmmaTile::b_value(k, col);
        if (got[row * WgmmaTile::kCols + col] != want && ++wrong <= 5) {
          ADD_FAILURE() << "D[" << row << "][" << col << "] = " << got[row * WgmmaTile::kCols + col]
                        << ", want " << want << (kind == HalfKind::fp16 ? " (fp16)" : " (bf16)")
                        << (fault != Fault::none ? ", tile handed over by an mbarrier" : "");
        }
      }
    }
    EXPECT_EQ(wrong, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Wgmma, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

struct BrokenRule {
  Fault fault;
  const char* name;
  std::string says;  // what the failure must say
};
void PrintTo(const BrokenRule& r, std::ostream* os) { *os << r.name; }

class HostWgmmaRule : public ::testing::TestWithParam<BrokenRule> {};

// Each is undefined on the GPU (a wrong D at best, silently); the host
// executor stops the kernel, saying which rule and which thread.
TEST_P(HostWgmmaRule, BreakingItFailsTheLaunchNamingIt) {
  auto backend = make_host_backend();
  Buffer out(*backend, WgmmaTile::kRows * WgmmaTile::kCols * 4, "out");
  try {
    launch_on_host<WgmmaTile>(WgmmaTile::shape(),
                              {out.as<float>(), HalfKind::bf16, GetParam().fault});
    ADD_FAILURE() << "no failure for " << GetParam().name;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().says), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Faults, HostWgmmaRule,
    ::testing::Values(
        BrokenRule{Fault::no_wgmma_fence, "NoWgmmaFence", "without a wgmma_fence"},
        BrokenRule{Fault::a_changed_in_flight, "AChangedInFlight",
                   "thread 5 changed its A registers before the wgmma_wait"},
        BrokenRule{Fault::acc_changed_in_flight, "AccumulatorChangedInFlight",
                   "thread 6 wrote its accumulators while the wgmma was in flight"},
        BrokenRule{Fault::b_written_in_flight, "BWrittenInFlight",
                   "(B[0][0]) was written before the wgmma_wait"},
        BrokenRule{Fault::b_misaligned, "BTileMisaligned", "is not a 1024-byte-aligned tile"},
        BrokenRule{Fault::exit_in_flight, "ExitInFlight", "exits with a wgmma in flight"},
        BrokenRule{Fault::no_proxy_fence, "NoProxyFence", "without a fence_proxy_async since"},
        BrokenRule{Fault::no_barrier_after_fence, "NoBarrierAfterTheFence",
                   "fenced, but with no barrier since the fence"},
        BrokenRule{Fault::handed_over_no_fence, "HandedOverWithNoReaderFence",
                   "handed over by an mbarrier phase, but with no fence_proxy_async since by a "
                   "thread ordered after the phase"},
        BrokenRule{Fault::fenced_handed_over_no_wait, "FencedHandedOverWithNoWait",
                   "of the warpgroup is not ordered after it by an mbarrier phase"},
        // Each thread's fence comes after its arrive, so no wait orders
        // another thread after it: the fence of thread 7, the last to
        // write the first granule, is named.
        BrokenRule{Fault::handed_over_fence_before_wait, "HandedOverFenceBeforeTheWait",
                   "(thread 7's; thread 0 of the warpgroup is not ordered after it"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace nvh
