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

// Throws NotCoResident unless the device holds every block of `shape` at
// once (its blocks a multiprocessor, by the occupancy calculator, times its
// multiprocessors), as a cooperative launch needs; the blocks a
// multiprocessor are asked once per kernel, block size and shared memory.
template <class Entry>
void require_co_resident(CudaBackend& gpu, Entry entry, const LaunchShape& shape) {
  static thread_local struct {
    Entry entry = nullptr;
    uint32_t threads = 0, shared_bytes = 0;
    int per_sm = 0;
  } asked;
  const uint32_t threads = threads_per_block(shape);
  if (asked.entry != entry || asked.threads != threads ||
      asked.shared_bytes != shape.shared_bytes) {
    NVH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &asked.per_sm, entry, static_cast<int>(threads), shape.shared_bytes));
    asked = {entry, threads, shape.shared_bytes, asked.per_sm};
  }
  const uint64_t holds = uint64_t(asked.per_sm) * uint64_t(gpu.caps().multiprocessors);
  if (total_blocks(shape) > holds) {
    throw NotCoResident("launch_on_cuda: a co-resident grid of " +
                        std::to_string(total_blocks(shape)) + " blocks, where " +
                        gpu.caps().device_name + " holds " + std::to_string(holds) + " (" +
                        std::to_string(asked.per_sm) + " a multiprocessor)");
  }
}

// Throws std::invalid_argument for a clustered launch the device cannot
// make: clusters need sm_90, and each extent must divide the grid's, at
// most 8 blocks in all (the portable size, which needs no opt-in); the
// host executor refuses the same shapes (host_executor.cc).
inline void require_clusters(const CudaBackend& gpu, const LaunchShape& shape) {
  const Dim3 c = shape.cluster, g = shape.grid;
  const std::string what = "launch_on_cuda: cluster (" + std::to_string(c.x) + "," +
                           std::to_string(c.y) + "," + std::to_string(c.z) + ") over grid (" +
                           std::to_string(g.x) + "," + std::to_string(g.y) + "," +
                           std::to_string(g.z) + "): ";
  if (gpu.caps().sm_major < 9) {
    throw std::invalid_argument(
        what + "thread-block clusters need sm_90, and " + gpu.caps().device_name + " is sm_" +
        std::to_string(gpu.caps().sm_major) + std::to_string(gpu.caps().sm_minor));
  }
  if (c.x == 0 || c.y == 0 || c.z == 0 || g.x % c.x != 0 || g.y % c.y != 0 || g.z % c.z != 0 ||
      blocks_per_cluster(shape) > 8) {
    throw std::invalid_argument(what +
                                "each extent must be positive and divide the grid's, 8 blocks at "
                                "most");
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
  const bool overlaps = shape.overlaps_prior_grid && gpu.caps().sm_major >= 9;
  if (shape.co_resident) require_co_resident(gpu, entry, shape);
  const bool clustered = is_clustered(shape);
  if (clustered) require_clusters(gpu, shape);
  if (overlaps || shape.co_resident || clustered) {
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = shape.shared_bytes;
    config.stream = gpu.stream();
    cudaLaunchAttribute attrs[3] = {};
    unsigned n = 0;
    if (overlaps) {
      attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attrs[n++].val.programmaticStreamSerializationAllowed = 1;
    }
    if (shape.co_resident) {
      attrs[n].id = cudaLaunchAttributeCooperative;
      attrs[n++].val.cooperative = 1;
    }
    if (clustered) {
      attrs[n].id = cudaLaunchAttributeClusterDimension;
      attrs[n].val.clusterDim.x = shape.cluster.x;
      attrs[n].val.clusterDim.y = shape.cluster.y;
      attrs[n++].val.clusterDim.z = shape.cluster.z;
    }
    config.attrs = attrs;
    config.numAttrs = n;
    NVH_CUDA_CHECK(cudaLaunchKernelEx(&config, entry, params));
    return;
  }
  entry<<<grid, block, shape.shared_bytes, gpu.stream()>>>(params);
  NVH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace nvh
