// The GPU instantiation of wgmma_test.cc's kernel.
#include "harness/device_launch.cuh"
#include "harness/wgmma_test_kernel.cuh"

namespace nvh {
template void launch_on_cuda<test_kernels::WgmmaTile>(Backend&, const LaunchShape&,
                                                      const test_kernels::WgmmaTile::Params&);
template void launch_on_cuda<test_kernels::WgmmaTileOf<256>>(
    Backend&, const LaunchShape&, const test_kernels::WgmmaTileOf<256>::Params&);
}  // namespace nvh
