// The NVFP4 operator's branch probes (harness/probe.h). NVFP4_PROBE(cond) at
// a decision point of a kernel body counts its condition's outcomes when the
// build has probes (NVFP4_DEVICE_PROBES: presets `cuda-probes`) and is the
// bare `(cond)` otherwise. One probe per line.
//
// kProbeFiles lists every header whose kernel bodies hold probes; a probe in
// a file missing here fails to compile. A file's index is its counter bank,
// so add new files at the end.
#pragma once

#include "harness/probe.h"

namespace nvfp4 {

inline constexpr const char* kProbeFiles[] = {
    "kernels/bias_round.cuh",   "kernels/empty.cuh",        "kernels/gemv_mma.cuh",
    "kernels/gemv_scalar.cuh",  "kernels/native_sm120.cuh", "kernels/prefill_scalar.cuh",
    "kernels/prefill_vec8.cuh", "kernels/gemv_output.cuh",  "kernels/prefill_fused.cuh",
};
inline constexpr std::size_t kProbeFileCount = sizeof(kProbeFiles) / sizeof(kProbeFiles[0]);

}  // namespace nvfp4

#define NVFP4_PROBE(cond) NVH_PROBE_IN(::nvfp4::kProbeFiles, cond)
