// The backend-independent half of gpu_timing.h; in a build without CUDA the
// GPU timers say so instead of timing anything.
#include "harness/gpu_timing.h"

#include <algorithm>

namespace nvh {

TimingStats summarize(std::vector<double> us) {
  TimingStats s;
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  s.launches = static_cast<int>(us.size());
  s.min_us = us.front();
  s.max_us = us.back();
  const std::size_t n = us.size();
  s.median_us = n % 2 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2;
  return s;
}

#if !defined(NVH_HAVE_CUDA)
TimingStats time_launches(Backend&, int, int, const std::function<void(int)>&) {
  throw BackendUnavailable(
      "time_launches: this build has no CUDA backend (configure with the cuda preset)");
}
TimingStats time_back_to_back(Backend&, int, int, int, const std::function<void(int)>&) {
  throw BackendUnavailable(
      "time_back_to_back: this build has no CUDA backend (configure with the cuda preset)");
}
double measure_copy_ceiling(Backend&, std::size_t, int) {
  throw BackendUnavailable(
      "measure_copy_ceiling: this build has no CUDA backend (configure with the cuda preset)");
}
void copy_on_device(Backend&, void*, const void*, std::size_t) {
  throw BackendUnavailable(
      "copy_on_device: this build has no CUDA backend (configure with the cuda preset)");
}
double measure_fill_ceiling(Backend&, std::size_t, int) {
  throw BackendUnavailable(
      "measure_fill_ceiling: this build has no CUDA backend (configure with the cuda preset)");
}
LaunchTimes time_each_launch(Backend&, int, const std::function<void(int)>&) {
  throw BackendUnavailable(
      "time_each_launch: this build has no CUDA backend (configure with the cuda preset)");
}
#endif

}  // namespace nvh
