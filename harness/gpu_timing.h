// Timing on the GPU, honestly: CUDA events around each launch, warm-up
// first, the median over many launches, and the device-to-device copy
// ceiling measured in the same process so every "share of the ceiling"
// compares like with like. Only in CUDA builds.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "harness/backend.h"

namespace nvh {

struct TimingStats {
  double median_us = 0, min_us = 0, max_us = 0;
  int launches = 0;
};

// Runs `launch(i)` `warmup` times untimed, then `reps` times, each bracketed
// by events on the backend's stream; `i` counts up so the caller can rotate
// through input sets. Throws if the backend is not a GPU.
TimingStats time_launches(Backend& backend, int warmup, int reps,
                          const std::function<void(int)>& launch);

// Kernel time without the launch: `trials` times, `launches` calls of
// `launch(i)` queued back to back behind one GPU hold between one pair of
// events, the span divided by `launches`; the median over the trials.
// (time_launches brackets every launch with its own events, which adds the
// launch's ramp and the events themselves, about 2 us on the H200, to each.)
// `warmup` untimed calls first. Throws if the backend is not a GPU.
TimingStats time_back_to_back(Backend& backend, int warmup, int trials, int launches,
                              const std::function<void(int)>& launch);

// The device-to-device copy bandwidth in bytes per second, counting bytes
// read plus bytes written (cudaMemcpyAsync of `bytes`, median of `reps`).
double measure_copy_ceiling(Backend& backend, std::size_t bytes, int reps);

// Write-only bandwidth in bytes per second (cudaMemsetAsync of `bytes`,
// median of `reps`): a diagnostic for kernels that mostly write.
double measure_fill_ceiling(Backend& backend, std::size_t bytes, int reps);

// An asynchronous device-to-device copy on the backend's stream.
void copy_on_device(Backend& backend, void* dst, const void* src, std::size_t bytes);

TimingStats summarize(std::vector<double> microseconds);

// Every launch's own time, for callers that sum phases rather than take a
// median: `launch(i)` for i in [0, launches), each between its own pair of
// events, all queued behind one GPU hold (as time_launches does), no warm-up,
// one synchronize at the end. `span_us` runs from the first start event to the
// last end event, so span_us - sum(us) is GPU time between the launches.
struct LaunchTimes {
  std::vector<double> us;
  double span_us = 0;
};
LaunchTimes time_each_launch(Backend& backend, int launches,
                             const std::function<void(int)>& launch);

}  // namespace nvh
