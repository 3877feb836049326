// The bench runs that measured prefill_fused's crossover on the H200
// (bench/nvfp4_matmul/results/h200-crossover-wtma.json, above M = 128 on 16
// Mi weights or more, and h200-crossover-small-weights.json, M = 9 to 256 on
// smaller weights) and the plan's splits (h200-plan-splits.json) as built,
// for the tests that hold the route table and the plan to them;
// bench/nvfp4_matmul/CMakeLists.txt generates it (harness/embedded_file.h).
#pragma once

#include <cstddef>

#include "harness/embedded_file.h"

namespace nvfp4 {

extern const nvh::EmbeddedFile kCrossoverRun[];
extern const std::size_t kCrossoverRunCount;

}  // namespace nvfp4
