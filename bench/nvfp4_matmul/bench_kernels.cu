// GPU instantiations of the bench-only kernels (see kernels/nvfp4_matmul/launch_cuda.cu
// for the operator's).
#include "bench/nvfp4_matmul/gemv_depth.cuh"
#include "bench/nvfp4_matmul/gemv_sliced.cuh"
#include "bench/nvfp4_matmul/gemv_tma.cuh"
#include "bench/nvfp4_matmul/launch_floor.cuh"
#include "bench/nvfp4_matmul/pattern_copy.cuh"
#include "bench/nvfp4_matmul/read_alone.cuh"
#include "harness/device_launch.cuh"
#include "kernels/nvfp4_matmul/prefill_vec8.cuh"

namespace nvh {
template void launch_on_cuda<nvfp4::LaunchFloor>(Backend&, const LaunchShape&,
                                                 const nvfp4::LaunchFloor::Params&);
template void launch_on_cuda<nvfp4::PatternCopy>(Backend&, const LaunchShape&,
                                                 const nvfp4::PatternCopy::Params&);
template void launch_on_cuda<nvfp4::ReadAlone>(Backend&, const LaunchShape&,
                                               const nvfp4::ReadAlone::Params&);
template void launch_on_cuda<nvfp4::GemvMmaDepth<2>>(Backend&, const LaunchShape&,
                                                     const nvfp4::GemvMma::Params&);
template void launch_on_cuda<nvfp4::GemvMmaDepth<3>>(Backend&, const LaunchShape&,
                                                     const nvfp4::GemvMma::Params&);
template void launch_on_cuda<nvfp4::GemvMmaDepth<4>>(Backend&, const LaunchShape&,
                                                     const nvfp4::GemvMma::Params&);
template void launch_on_cuda<nvfp4::GemvMmaDepth<6>>(Backend&, const LaunchShape&,
                                                     const nvfp4::GemvMma::Params&);
template void launch_on_cuda<nvfp4::GemvMmaSliced>(Backend&, const LaunchShape&,
                                                   const nvfp4::GemvMmaSliced::Params&);
template void launch_on_cuda<nvfp4::GemvMmaTmaOf<3>>(Backend&, const LaunchShape&,
                                                     const nvfp4::GemvMmaTmaOf<3>::Params&);
template void launch_on_cuda<nvfp4::GemvMmaTmaOf<4>>(Backend&, const LaunchShape&,
                                                     const nvfp4::GemvMmaTmaOf<4>::Params&);
template void launch_on_cuda<nvfp4::GemvMmaTmaOf<3, 1>>(Backend&, const LaunchShape&,
                                                        const nvfp4::GemvMmaTmaOf<3, 1>::Params&);
template void launch_on_cuda<nvfp4::GemvMmaTmaOf<4, 1>>(Backend&, const LaunchShape&,
                                                        const nvfp4::GemvMmaTmaOf<4, 1>::Params&);
template void launch_on_cuda<nvfp4::DequantChunk<8, 2>>(Backend&, const LaunchShape&,
                                                        const nvfp4::DequantParams&);
template void launch_on_cuda<nvfp4::DequantChunk<8, 8>>(Backend&, const LaunchShape&,
                                                        const nvfp4::DequantParams&);
}  // namespace nvh
