// GPU instantiations of the bench-only kernels (see kernels/nvfp4_matmul/launch_cuda.cu
// for the operator's).
#include "bench/nvfp4_matmul/launch_floor.cuh"
#include "bench/nvfp4_matmul/pattern_copy.cuh"
#include "bench/nvfp4_matmul/read_alone.cuh"
#include "harness/device_launch.cuh"

namespace nvh {
template void launch_on_cuda<nvfp4::LaunchFloor>(Backend&, const LaunchShape&,
                                                 const nvfp4::LaunchFloor::Params&);
template void launch_on_cuda<nvfp4::PatternCopy>(Backend&, const LaunchShape&,
                                                 const nvfp4::PatternCopy::Params&);
template void launch_on_cuda<nvfp4::ReadAlone>(Backend&, const LaunchShape&,
                                               const nvfp4::ReadAlone::Params&);
}  // namespace nvh
