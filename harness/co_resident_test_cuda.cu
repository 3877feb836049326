// The GPU instantiation of co_resident_test.cc's kernel.
#include "harness/co_resident_test_kernel.cuh"
#include "harness/device_launch.cuh"

namespace nvh {
template void launch_on_cuda<test_kernels::TileShareSums>(
    Backend&, const LaunchShape&, const test_kernels::TileShareSums::Params&);
}  // namespace nvh
