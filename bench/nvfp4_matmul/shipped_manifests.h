// The text of the shipped replay manifests (bench/nvfp4_matmul/manifests/*.json) as built,
// for the tests; bench/nvfp4_matmul/CMakeLists.txt generates it (harness/embedded_file.h).
#pragma once

#include <cstddef>

#include "harness/embedded_file.h"

namespace nvfp4 {

extern const nvh::EmbeddedFile kShippedManifests[];
extern const std::size_t kShippedManifestsCount;

}  // namespace nvfp4
