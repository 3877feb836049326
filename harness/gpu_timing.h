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
TimingStats time_launches(Backend& backend, int warmup, int reps, const std::function<void(int)>& launch);

// The device-to-device copy bandwidth in bytes per second, counting bytes
// read plus bytes written (cudaMemcpyAsync of `bytes`, median of `reps`).
double measure_copy_ceiling(Backend& backend, std::size_t bytes, int reps);

TimingStats summarize(std::vector<double> microseconds);

}  // namespace nvh
