// The CUDA half of launch.h. Include it in the one .cu file that instantiates
// launch_on_cuda<Kernel> for an operator's kernels.
#pragma once

#include <string>

#include "harness/backend_cuda.h"
#include "harness/device_ctx.cuh"
#include "harness/launch.h"

namespace nvh {

// Params with tensor maps (HasTensorMaps) get each map's CUtensorMap
// encoded from its fields; other Params pass as they are.
template <class Params>
void encode_tensor_maps(Params& p) {
  if constexpr (HasTensorMaps<Params>::value) {
    for (TensorMap2d* map : p.tensor_maps()) encode_tensor_map(*map);
  }
}

template <class Kernel>
void launch_on_cuda(Backend& backend, const LaunchShape& shape,
                    const typename Kernel::Params& given) {
#if defined(NVH_PROBES) && !defined(__CUDA_ARCH__)
  // Instantiates the kernel's host body as well (in the host pass only, where
  // HostCtx is callable), so that its probe sites are registered
  // (harness/probe.h) even when only the GPU ever launches it.
  static_cast<void>(&launch_on_host<Kernel>);
#endif
  auto& gpu = static_cast<CudaBackend&>(backend);
  typename Kernel::Params params = given;
  encode_tensor_maps(params);
  const auto entry = device_entry<Kernel>();
  const dim3 grid(shape.grid.x, shape.grid.y, shape.grid.z);
  const dim3 block(shape.block.x, shape.block.y, shape.block.z);
  if (shape.shared_bytes > 48 * 1024) {
    NVH_CUDA_CHECK(cudaFuncSetAttribute(entry, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(shape.shared_bytes)));
  }
  if (shape.overlaps_prior_grid && gpu.caps().sm_major >= 9) {
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = shape.shared_bytes;
    config.stream = gpu.stream();
    cudaLaunchAttribute overlap[1] = {};
    overlap[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = overlap;
    config.numAttrs = 1;
    NVH_CUDA_CHECK(cudaLaunchKernelEx(&config, entry, params));
    return;
  }
  entry<<<grid, block, shape.shared_bytes, gpu.stream()>>>(params);
  NVH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace nvh
