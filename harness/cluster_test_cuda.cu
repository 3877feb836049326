// The GPU instantiation of cluster_test.cc's kernel.
#include "harness/cluster_test_kernel.cuh"
#include "harness/device_launch.cuh"

namespace nvh {
template void launch_on_cuda<test_kernels::ClusterSums>(Backend&, const LaunchShape&,
                                                        const test_kernels::ClusterSums::Params&);
}  // namespace nvh
