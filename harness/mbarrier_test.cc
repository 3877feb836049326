// mbarriers (kernel_ctx.h) on every backend: a producer warp hands four
// stages to a consumer warp through two slots, and in order relay the
// consumer hands each on to a third warp through another barrier
// (mbarrier_test_kernel.cuh);
// on the GPU (sm_90: try_wait) that is the hardware, on the host the
// executor's emulation. Then each rule the host executor holds such a
// pipeline to, broken once: the launch fails, naming it.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/host_executor.h"
#include "harness/launch.h"
#include "harness/mbarrier_test_kernel.cuh"

namespace nvh {
namespace {

using test_kernels::RingOrder;
using test_kernels::StageRing;

LaunchShape ring_shape(RingOrder order) {
  return LaunchShape{
      {1, 1, 1}, {test_kernels::has_relay(order) ? 96u : 64u, 1, 1}, StageRing::kSharedBytes, true};
}

std::vector<uint32_t> ring_input() {
  std::vector<uint32_t> words(StageRing::kStages * StageRing::kWords);
  for (uint32_t i = 0; i < words.size(); ++i) words[i] = 0x9E3779B9u * (i + 1);
  return words;
}

class Mbarrier : public OnBackend {};

TEST_P(Mbarrier, EveryStageReachesTheConsumerOnce) {
  if (GetParam() == "cuda" && backend().caps().sm() < 90) {
    GTEST_SKIP() << "mbarrier try_wait needs sm_90; this GPU is sm_" << backend().caps().sm();
  }
  const std::vector<uint32_t> words = ring_input();
  Buffer src(backend(), words.size() * 4, "src"), out(backend(), StageRing::kWords * 4, "out"),
      relay_out(backend(), StageRing::kWords * 4, "relay_out");
  src.upload(words.data(), words.size() * 4);
  for (RingOrder order :
       {RingOrder::legal, RingOrder::copy_arrive, RingOrder::relay, RingOrder::one_lane_waits}) {
    const char* how = order == RingOrder::legal         ? "producer arrives after its wait"
                      : order == RingOrder::copy_arrive ? "producer arrives by cp.async"
                      : order == RingOrder::relay       ? "a third warp reads through a relay"
                                                        : "one consumer lane waits, a sync_warp";
    backend().fill(out.data(), 0xFF, StageRing::kWords * 4);
    backend().fill(relay_out.data(), 0xFF, StageRing::kWords * 4);
    launch<StageRing>(backend(), ring_shape(order),
                      {src.as<uint32_t>(), out.as<uint32_t>(), order, relay_out.as<uint32_t>()});
    backend().synchronize();
    const std::vector<uint32_t> got = out.download_as<uint32_t>(StageRing::kWords);
    const std::vector<uint32_t> relayed = relay_out.download_as<uint32_t>(StageRing::kWords);
    for (uint32_t lane = 0; lane < StageRing::kWords; ++lane) {
      uint32_t want = 0;  // wraps as the kernel's sum does
      for (uint32_t s = 0; s < StageRing::kStages; ++s)
        want += words[s * StageRing::kWords + StageRing::read_index(lane)];
      EXPECT_EQ(got[lane], want) << "consumer lane " << lane << ", " << how;
      if (order == RingOrder::relay) {
        EXPECT_EQ(relayed[lane], want) << "relay lane " << lane;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Mbarrier, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

struct BrokenRing {
  RingOrder order;
  const char* name;
  std::string says;  // what the failure must say
  // Or this: where the host's turns let a consumer read a slot before the
  // producer's copy into it, the write-after-read check stops the kernel
  // first (the same race seen from the copy's side: TmaShadow).
  std::string or_says = "";
};
void PrintTo(const BrokenRing& r, std::ostream* os) { *os << r.name; }

class HostMbarrierRule : public ::testing::TestWithParam<BrokenRing> {};

// Each races or hangs on the GPU (a stale stage, or a consumer that never
// wakes); the host executor stops the kernel and says why.
TEST_P(HostMbarrierRule, BreakingItFailsTheLaunchNamingIt) {
  auto backend = make_host_backend();
  const std::vector<uint32_t> words = ring_input();
  Buffer src(*backend, words.size() * 4, "src"), out(*backend, StageRing::kWords * 4, "out"),
      relay_out(*backend, StageRing::kWords * 4, "relay_out");
  src.upload(words.data(), words.size() * 4);
  try {
    launch_on_host<StageRing>(
        ring_shape(GetParam().order),
        {src.as<uint32_t>(), out.as<uint32_t>(), GetParam().order, relay_out.as<uint32_t>()});
    ADD_FAILURE() << "no failure for " << GetParam().name;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.find(GetParam().says) != std::string::npos ||
                (!GetParam().or_says.empty() && what.find(GetParam().or_says) != std::string::npos))
        << what;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Faults, HostMbarrierRule,
    ::testing::Values(BrokenRing{RingOrder::no_full_wait, "NoFullWait",
                                 "cp.async into shared offset 4, handed over by an mbarrier "
                                 "phase that this thread is not ordered after",
                                 "the copy may land before the read"},
                      BrokenRing{RingOrder::arrive_before_wait, "ArriveBeforeTheCopiesLand",
                                 "handed over by an mbarrier phase that this thread is not "
                                 "ordered after"},
                      BrokenRing{RingOrder::count_too_high, "CountTooHigh",
                                 "wait at a barrier or collective that can never complete"},
                      BrokenRing{RingOrder::no_barrier_after_init, "NoBarrierAfterInit",
                                 "with no block barrier since thread 0 initialized it"},
                      // The host's turns run the producer through every stage first,
                      // so the consumer's phases alias and it waits forever; a
                      // consumer that had read first would stop the copy (the
                      // write-after-read check, as prefill_fused_wgmma's ring shows).
                      BrokenRing{RingOrder::no_empty_wait, "NoEmptyWait",
                                 "wait at a barrier or collective that can never complete",
                                 "the copy may land before the read"},
                      BrokenRing{RingOrder::relay_no_wait, "ReadWithoutWaiting",
                                 "handed over by an mbarrier phase that this thread is not "
                                 "ordered after",
                                 "the copy may land before the read"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace nvh
