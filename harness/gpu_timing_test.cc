#include "harness/gpu_timing.h"

#include <gtest/gtest.h>

namespace nvh {
namespace {

TEST(GpuTiming, SummaryTakesTheMedian) {
  const TimingStats odd = summarize({5, 1, 3});
  EXPECT_EQ(odd.median_us, 3);
  EXPECT_EQ(odd.min_us, 1);
  EXPECT_EQ(odd.max_us, 5);
  EXPECT_EQ(odd.launches, 3);
  EXPECT_EQ(summarize({4, 1, 3, 2}).median_us, 2.5);
  EXPECT_EQ(summarize({}).launches, 0);
}

TEST(GpuTiming, RefusesTheHostBackend) {
  auto host = make_host_backend();
  EXPECT_ANY_THROW(time_launches(*host, 1, 1, [](int) {}));
  EXPECT_ANY_THROW(measure_copy_ceiling(*host, 1024, 1));
}

}  // namespace
}  // namespace nvh
