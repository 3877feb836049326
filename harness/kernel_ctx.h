// The vocabulary kernel bodies are written in, shared by the GPU and the host
// executor: thread identity, the __host__ __device__ spelling, and the launch
// shape. A kernel body is `template <class Ctx> NVH_HD void body(Ctx&, const P&)`;
// Ctx is nvh::DeviceCtx on the GPU (device_ctx.cuh) and nvh::HostCtx on the
// CPU (host_executor.h). Both give the same members:
//   thread_idx() block_idx() block_dim() grid_dim()   -> Dim3
//   lane() warp()                                       -> lane / warp index in the block
//   shfl_xor(u32|float, lane_mask) shfl_idx(u32|float, src_lane)
//   sync_threads() sync_warp()                          -> block / warp barrier
//   shared_mem<T>()                                     -> dynamic shared memory
//   cp_async16/cp_async4(dst, src) cp_async_commit() cp_async_wait<n>() -> async copies to shared
//   cp_async16_or_zero(dst, src, read)                  -> cp_async16, or 16 zero bytes and no
//     read when read is false (cp.async's src-size 0)
//   ldmatrix_x4<transpose>(out, shared_row)            -> four 8x8 b16 matrices from shared
//     memory into the mma fragment layout (lane l gives row l % 8 of matrix l / 8)
//   mma_m16n8k16(d, a, b, c, HalfKind)                   -> tensor-core step, fp32 accumulate
//   atomic_inc_global(counter, wrap_at) fence_global()  -> atom.inc (old value; wraps to 0
//     at wrap_at) and __threadfence(), for blocks that count their arrivals; the
//     host executor holds kernels to the fences that pattern needs (host_memcheck.h)
//   wait_global_at_least(counter, target)              -> a relaxed load of a global counter in a
//     loop until it reaches target, for the blocks of a co-resident launch
//     (LaunchShape::co_resident) that wait for one another's arrivals; a fence_global()
//     must follow it before the block reads what the others wrote, as after an atomic
//   wgmma_fence() wgmma_m64k16<N>(acc, a, b_tile, HalfKind) wgmma_commit() wgmma_wait<n>()
//     fence_proxy_async()                              -> sm_90a's warpgroup mma (wgmma.mma_async,
//     A from registers, B from shared memory in the 128-byte-swizzled layout
//     described in device_ctx.cuh), its fence, groups and wait, and
//     fence.proxy.async (the generic proxy's shared writes made visible to
//     wgmma); the host executor holds kernels to the rules (host_executor.h)
//   mbarrier_init(bar, count) mbarrier_arrive(bar) mbarrier_wait(bar, parity)
//   cp_async_mbarrier_arrive(bar)                       -> mbarriers in shared memory (init;
//     arrive, release; try_wait.parity in a loop, acquire; cp.async.mbarrier.arrive.noinc,
//     an arrival once the thread's copies land), for pipelines whose warps hand stages
//     to each other; the host executor holds kernels to their rules
//   mbarrier_arrive_expect_tx(bar, bytes) tma_load_2d(dst, map, col, row, bar)
//                                                       -> sm_90's TMA: an arrival that expects
//     `bytes` of copies on the phase, and a box of a 2-D tensor map (tensor_map.h) copied
//     into shared memory, its bytes counted down on `bar`; the host executor holds kernels
//     to their rules; tma_load_2d_streaming(...) the same with an L2 evict-first hint
//   prefetch_tensor_map(map)                            -> prefetch.tensormap (a hint)
//   cluster_rank() cluster_sync() map_shared_rank(p, rank) -> sm_90's thread-block clusters
//     (LaunchShape::cluster): the block's rank in its cluster (%cluster_ctarank), the
//     cluster's barrier (barrier.cluster arrive.release + wait.acquire, every thread of
//     every block), and the address of the same byte of shared memory in the cluster's
//     block `rank` (mapa), which the block reads with the generic loads (distributed
//     shared memory); the host executor holds kernels to the rules (host_executor.h)
//   wait_prior_grid() launch_dependents()              -> programmatic dependent launch
//     (LaunchShape::overlaps_prior_grid): wait for the grid before this one,
//     and let the grid after this one start launching
#pragma once

#include <cstdint>
#include <stdexcept>

#if defined(__CUDACC__)
#define NVH_HD __host__ __device__
#define NVH_INLINE __forceinline__
#else
#define NVH_HD
#define NVH_INLINE inline
#endif

// Unrolls the loop that follows on the GPU, where a loop over a register
// array's index must be unrolled to keep the array in registers; nothing on
// the host.
#if defined(__CUDA_ARCH__)
#define NVH_UNROLL _Pragma("unroll")
#else
#define NVH_UNROLL
#endif

namespace nvh {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

// What a launch needs besides the kernel and its parameters.
struct LaunchShape {
  Dim3 grid;
  Dim3 block;
  uint32_t shared_bytes = 0;
  // Kernels that never use warp collectives or barriers run on the host as
  // plain loops; the others run each thread as a fiber (host_executor.h).
  bool uses_collectives = false;
  // Launched to overlap the grid before it on the stream (CUDA's programmatic
  // dependent launch, sm >= 90): the launch's latency hides behind that
  // grid's last blocks. Every thread must then call wait_prior_grid() before
  // it touches global memory, which that grid may still be writing; the host
  // executor holds kernels to that (host_memcheck.h).
  bool overlaps_prior_grid = false;
  // With overlaps_prior_grid, a launch that touches nothing the grid before
  // it writes: before its wait_prior_grid() a thread reads only global bytes
  // that grid does not write and writes only bytes it neither reads nor
  // writes, so it may start while that grid still runs (which that grid
  // allows by calling launch_dependents() early); and every thread waits
  // before it exits, so that this grid ends after that one (the work after
  // it on the stream relies on both). The host executor checks both against
  // the bytes that grid touched where it recorded them (lets_dependents_overlap);
  // where it did not, any global access before the wait fails.
  bool independent_of_prior_grid = false;
  // The kernel calls launch_dependents() before its end, letting the launch
  // after it start early: the host executor records which global bytes this
  // grid reads and writes, for that launch's rule (independent_of_prior_grid),
  // and fails a block's global store made before any thread of the block has
  // called launch_dependents() (a trigger only after the stores would let
  // the launch after start only as the blocks finish).
  bool lets_dependents_overlap = false;
  // The kernel reads shared memory through the async proxy (wgmma): the host
  // executor then tracks its generic writes to shared memory until fenced
  // (host_memcheck.h). Needs uses_collectives.
  bool reads_shared_async = false;
  // Every block of the grid runs at once (CUDA's cooperative launch), so a
  // block may wait for another's arrival on a global counter
  // (wait_global_at_least): without it the block waited for may never be
  // scheduled while the waiter holds its multiprocessor. A launch whose
  // blocks the backend cannot hold at once throws NotCoResident before
  // anything runs (device_launch.cuh, host_executor.h). Needs
  // uses_collectives.
  bool co_resident = false;
  // Thread-block clusters (sm_90): the grid in clusters of these blocks
  // (x fastest, as %cluster_ctarank counts them), run at once, whose blocks
  // read one another's shared memory (map_shared_rank) and meet at
  // cluster_sync(). Each extent divides the grid's; at most 8 blocks (the
  // portable cluster size). {1, 1, 1}: no clusters. Needs uses_collectives.
  Dim3 cluster = {};
};

// What a launch with co_resident throws, before it starts, when the backend
// cannot run all of its blocks at once: the caller takes another way.
class NotCoResident : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The 16-bit float formats the mma step reads.
enum class HalfKind : uint8_t { fp16, bf16 };

inline uint64_t total_blocks(const LaunchShape& s) {
  return uint64_t{s.grid.x} * s.grid.y * s.grid.z;
}
inline uint32_t blocks_per_cluster(const LaunchShape& s) {
  return s.cluster.x * s.cluster.y * s.cluster.z;
}
inline bool is_clustered(const LaunchShape& s) {
  return s.cluster.x != 1 || s.cluster.y != 1 || s.cluster.z != 1;
}
inline uint32_t threads_per_block(const LaunchShape& s) {
  return s.block.x * s.block.y * s.block.z;
}

}  // namespace nvh
