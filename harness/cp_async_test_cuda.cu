// The GPU instantiation of cp_async_test.cc's kernel.
#include "harness/cp_async_test_kernel.cuh"
#include "harness/device_launch.cuh"

namespace nvh {
template void launch_on_cuda<test_kernels::CopyOrZero>(Backend&, const LaunchShape&,
                                                       const test_kernels::CopyOrZero::Params&);
}  // namespace nvh
