// The text of every kernel header (kernels/nvfp4_matmul/*.cuh) as built, for the tests that
// read the kernels' sources (probes_test.cc); kernels/nvfp4_matmul/CMakeLists.txt generates it.
#pragma once

#include <cstddef>

#include "harness/embedded_file.h"

namespace nvfp4 {

extern const nvh::EmbeddedFile kKernelSources[];
extern const std::size_t kKernelSourcesCount;

}  // namespace nvfp4
