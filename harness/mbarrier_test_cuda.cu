// The GPU instantiation of mbarrier_test.cc's kernel.
#include "harness/device_launch.cuh"
#include "harness/mbarrier_test_kernel.cuh"

namespace nvh {
template void launch_on_cuda<test_kernels::StageRing>(Backend&, const LaunchShape&,
                                                      const test_kernels::StageRing::Params&);
}  // namespace nvh
