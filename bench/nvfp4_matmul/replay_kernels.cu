// GPU instantiations of the replay's kernels (see bench_kernels.cu and
// kernels/nvfp4_matmul/launch_cuda.cu for the others).
#include "bench/nvfp4_matmul/fill_random.cuh"
#include "harness/device_launch.cuh"

namespace nvh {
template void launch_on_cuda<nvfp4::FillRandom>(Backend&, const LaunchShape&,
                                                const nvfp4::FillRandom::Params&);
}  // namespace nvh
