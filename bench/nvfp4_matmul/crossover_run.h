// The bench run that measured prefill_fused's crossover above M = 128 on the
// H200 (bench/nvfp4_matmul/results/h200-crossover-wtma.json) as built, for the
// test that holds the route table to it; bench/nvfp4_matmul/CMakeLists.txt
// generates it (harness/embedded_file.h).
#pragma once

#include <cstddef>

#include "harness/embedded_file.h"

namespace nvfp4 {

extern const nvh::EmbeddedFile kCrossoverRun[];
extern const std::size_t kCrossoverRunCount;

}  // namespace nvfp4
