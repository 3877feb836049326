// The GPU instantiation of ldmatrix_test.cc's kernel.
#include "harness/device_launch.cuh"
#include "harness/ldmatrix_test_kernel.cuh"

namespace nvh {
template void launch_on_cuda<test_kernels::LdmatrixRows>(Backend&, const LaunchShape&,
                                                         const test_kernels::LdmatrixRows::Params&);
}  // namespace nvh
