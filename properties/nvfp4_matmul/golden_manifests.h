// The golden seed8 manifests, built into the binary (from properties/nvfp4_matmul/golden/
// at build time), so `verify` compares against them from any folder and on a
// machine without the source tree.
#pragma once

namespace nvfp4 {

extern const char* const
    kGoldenSeed8Host;  // properties/nvfp4_matmul/golden/seed8.host.json: the host executor
extern const char* const
    kGoldenSeed8H200;  // properties/nvfp4_matmul/golden/seed8.h200.json: an H200 (sm_90)

}  // namespace nvfp4
