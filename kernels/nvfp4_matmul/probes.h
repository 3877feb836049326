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

// The NVFP4 operator's probe bank (harness/probe.h): its sites are keyed
// (kProbeBank, file, line).
inline constexpr uint32_t kProbeBank = 0;

inline constexpr const char* kProbeFiles[] = {
    "kernels/nvfp4_matmul/bias_round.cuh",      "kernels/nvfp4_matmul/empty.cuh",
    "kernels/nvfp4_matmul/gemv_mma.cuh",        "kernels/nvfp4_matmul/gemv_scalar.cuh",
    "kernels/nvfp4_matmul/native_sm120.cuh",    "kernels/nvfp4_matmul/prefill_scalar.cuh",
    "kernels/nvfp4_matmul/prefill_vec8.cuh",    "kernels/nvfp4_matmul/gemv_output.cuh",
    "kernels/nvfp4_matmul/prefill_fused.cuh",   "kernels/nvfp4_matmul/prefill_fused_sum.cuh",
    "kernels/nvfp4_matmul/gemv_mma_slices.cuh", "kernels/nvfp4_matmul/prefill_fused_wgmma.cuh",
};
inline constexpr std::size_t kProbeFileCount = sizeof(kProbeFiles) / sizeof(kProbeFiles[0]);

}  // namespace nvfp4

#define NVFP4_PROBE(cond) NVH_PROBE_IN(::nvfp4::kProbeBank, ::nvfp4::kProbeFiles, cond)
