// The GPU instantiation of last_block_test.cc's kernel.
#include "harness/device_launch.cuh"
#include "harness/last_block_test_kernel.cuh"

namespace nvh {
template void launch_on_cuda<test_kernels::LastBlockSums>(
    Backend&, const LaunchShape&, const test_kernels::LastBlockSums::Params&);
}  // namespace nvh
