// The GPU instantiation of tma_test.cc's kernel.
#include "harness/device_launch.cuh"
#include "harness/tma_test_kernel.cuh"

namespace nvh {
template void launch_on_cuda<test_kernels::TmaBox>(Backend&, const LaunchShape&,
                                                   const test_kernels::TmaBox::Params&);
}  // namespace nvh
