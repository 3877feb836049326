// The GPU instantiations of every kernel this operator launches through
// nvh::launch (harness/launch.h). A kernel missing here fails to link, not at
// run time.
#include "harness/device_launch.cuh"
#include "kernels/nvfp4_matmul/bias_round.cuh"
#include "kernels/nvfp4_matmul/empty.cuh"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"
#include "kernels/nvfp4_matmul/gemv_mma_slices.cuh"
#include "kernels/nvfp4_matmul/gemv_scalar.cuh"
#include "kernels/nvfp4_matmul/native_sm120.cuh"
#include "kernels/nvfp4_matmul/prefill_fused.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_prepack.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_sum.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_wgmma.cuh"
#include "kernels/nvfp4_matmul/prefill_scalar.cuh"
#include "kernels/nvfp4_matmul/prefill_vec8.cuh"

namespace nvh {

// Variadic: a kernel's template arguments may hold commas.
#define NVFP4_INSTANTIATE(...)                                            \
  template void launch_on_cuda<__VA_ARGS__>(Backend&, const LaunchShape&, \
                                            const __VA_ARGS__::Params&)

NVFP4_INSTANTIATE(nvfp4::EmptyFill);
NVFP4_INSTANTIATE(nvfp4::PrefillScalarOn<uint32_t>);
NVFP4_INSTANTIATE(nvfp4::PrefillScalarOn<int64_t>);
NVFP4_INSTANTIATE(nvfp4::DequantChunk<8, 16>);  // the route, PrefillVec8
NVFP4_INSTANTIATE(nvfp4::DequantChunk<8>);      // the bench's sweeps
NVFP4_INSTANTIATE(nvfp4::DequantChunk<16>);
NVFP4_INSTANTIATE(nvfp4::DequantChunk<32>);
NVFP4_INSTANTIATE(nvfp4::BiasRound);
NVFP4_INSTANTIATE(nvfp4::GemvScalarRows<1, 1>);
NVFP4_INSTANTIATE(nvfp4::GemvScalarRows<1, 2>);
NVFP4_INSTANTIATE(nvfp4::GemvScalarRows<1, 4>);
NVFP4_INSTANTIATE(nvfp4::GemvScalarRows<1, 8>);
NVFP4_INSTANTIATE(nvfp4::GemvScalarRows<2, 1>);
NVFP4_INSTANTIATE(nvfp4::GemvScalarRows<2, 2>);
NVFP4_INSTANTIATE(nvfp4::GemvScalarRows<2, 4>);
NVFP4_INSTANTIATE(nvfp4::GemvScalarRows<2, 8>);
NVFP4_INSTANTIATE(nvfp4::GemvScalarRows<4, 1>);
NVFP4_INSTANTIATE(nvfp4::GemvScalarRows<4, 2>);
NVFP4_INSTANTIATE(nvfp4::GemvScalarRows<4, 4>);
NVFP4_INSTANTIATE(nvfp4::GemvScalarRows<4, 8>);
NVFP4_INSTANTIATE(nvfp4::GemvMma);
NVFP4_INSTANTIATE(nvfp4::GemvMmaSlices);
NVFP4_INSTANTIATE(nvfp4::GemvMmaSlices16);
NVFP4_INSTANTIATE(nvfp4::PrefillFusedM16N64);
NVFP4_INSTANTIATE(nvfp4::PrefillFusedM32N128);
NVFP4_INSTANTIATE(nvfp4::PrefillFusedM64N128);
NVFP4_INSTANTIATE(nvfp4::PrefillFusedM128N128);
NVFP4_INSTANTIATE(nvfp4::PrefillFusedSum);
NVFP4_INSTANTIATE(nvfp4::PrefillFusedPrepack);
// prefill_fused's wgmma kernels: by kind, W's order (prepacked or the
// contract's), tiles of A, cluster size, overlap role
// (prefill_fused_shapes.cuh, kHasOverlapKernel).
#define NVFP4_WGMMA(...)                                                                  \
  NVFP4_INSTANTIATE(nvfp4::PrefillFusedWgmmaOf<nvh::HalfKind::fp16, false, __VA_ARGS__>); \
  NVFP4_INSTANTIATE(nvfp4::PrefillFusedWgmmaOf<nvh::HalfKind::fp16, true, __VA_ARGS__>);  \
  NVFP4_INSTANTIATE(nvfp4::PrefillFusedWgmmaOf<nvh::HalfKind::bf16, false, __VA_ARGS__>); \
  NVFP4_INSTANTIATE(nvfp4::PrefillFusedWgmmaOf<nvh::HalfKind::bf16, true, __VA_ARGS__>)
NVFP4_WGMMA(1, 0, nvfp4::FusedOverlap::none);
NVFP4_WGMMA(2, 0, nvfp4::FusedOverlap::none);
NVFP4_WGMMA(1, 2, nvfp4::FusedOverlap::none);  // clusters of 2
NVFP4_WGMMA(2, 2, nvfp4::FusedOverlap::none);
NVFP4_WGMMA(2, 4, nvfp4::FusedOverlap::none);     // of 4
NVFP4_WGMMA(2, 0, nvfp4::FusedOverlap::leads);    // the rounds a tail overlaps
NVFP4_WGMMA(2, 4, nvfp4::FusedOverlap::follows);  // that tail
#undef NVFP4_WGMMA
NVFP4_INSTANTIATE(nvfp4::ActAmaxPartial);
NVFP4_INSTANTIATE(nvfp4::ActGlobalScale);
NVFP4_INSTANTIATE(nvfp4::ActQuantize);
NVFP4_INSTANTIATE(nvfp4::ScaleRetile);

#undef NVFP4_INSTANTIATE

}  // namespace nvh
