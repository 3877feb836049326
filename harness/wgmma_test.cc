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
using Fault = test_kernels::WgmmaFault;

class Wgmma : public OnBackend {};

// Runs tile kernel T (wgmma's N = T::kCols) and counts the outputs that
// differ from A B computed here (exact: small integers).
template <class T>
int wrong_outputs(Backend& backend, HalfKind kind, Fault fault) {
  Buffer out(backend, T::kRows * T::kCols * 4, "out");
  launch<T>(backend, T::shape(), {out.as<float>(), kind, fault});
  backend.synchronize();
  const std::vector<float> got = out.download_as<float>(T::kRows * T::kCols);
  int wrong = 0;
  for (int row = 0; row < T::kRows; ++row) {
    for (int col = 0; col < T::kCols; ++col) {
      float want = 0.0f;
      for (int k = 0; k < T::kK; ++k) want += T::a_value(row, k) * T::b_value(k, col);
      if (got[row * T::kCols + col] != want && ++wrong <= 5) {
        ADD_FAILURE() << "N = " << T::kCols << ": D[" << row << "][" << col
                      << "] = " << got[row * T::kCols + col] << ", want " << want
                      << (kind == HalfKind::fp16 ? " (fp16)" : " (bf16)")
                      << (fault != Fault::none ? ", tile handed over by an mbarrier" : "");
      }
    }
  }
  return wrong;
}

TEST_P(Wgmma, EveryThreadHoldsItsPartOfABInBothKinds) {
  if (GetParam() == "cuda" && backend().caps().sm() != 90) {
    GTEST_SKIP() << "wgmma needs sm_90a; this GPU is sm_" << backend().caps().sm();
  }
  // The tile fenced and met at a barrier, or handed over by an mbarrier.
  for (auto [kind, fault] :
       {std::pair{HalfKind::fp16, Fault::none}, std::pair{HalfKind::bf16, Fault::none},
        std::pair{HalfKind::bf16, Fault::handed_over},
        std::pair{HalfKind::fp16, Fault::fenced_then_handed_over}}) {
    EXPECT_EQ(wrong_outputs<WgmmaTile>(backend(), kind, fault), 0);
  }
}

// N = 256 (prefill_fused_wgmma's two tiles of A in one wgmma): B's 256
// columns in the same swizzled layout, accumulators d[0..127].
TEST_P(Wgmma, TheWgmmaOfN256HoldsItsLayoutInBothKinds) {
  if (GetParam() == "cuda" && backend().caps().sm() != 90) {
    GTEST_SKIP() << "wgmma needs sm_90a; this GPU is sm_" << backend().caps().sm();
  }
  for (HalfKind kind : {HalfKind::fp16, HalfKind::bf16}) {
    EXPECT_EQ(wrong_outputs<test_kernels::WgmmaTileOf<256>>(backend(), kind, Fault::none), 0);
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
