// The GPU side of the kernel vocabulary (kernel_ctx.h): every member is the
// CUDA builtin or instruction it names, so a kernel body compiled with
// DeviceCtx is the kernel one would have written by hand.
#pragma once

#if !defined(__CUDACC__)
#error "device_ctx.cuh is compiled by nvcc only"
#endif

#include <cstdint>
#include <type_traits>
#include <utility>

#include "harness/kernel_ctx.h"
#include "harness/tensor_map.h"

namespace nvh {

// One wgmma.mma_async m64n128k16 with fp32 accumulators d[0..63], A from
// registers a[0..3], B by descriptor `desc`, accumulating; TYPE "f16" or
// "bf16" (written once for both, the operand list being 70 long).
#define NVH_WGMMA_M64N128K16(TYPE)                                                                 \
  asm volatile(                                                                                    \
      "{\n.reg .pred acc;\nsetp.ne.b32 acc, %69, 0;\n"                                             \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE                                 \
      " "                                                                                          \
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%"   \
      "24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%"   \
      "46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "                  \
      "{%64,%65,%66,%67}, %68, acc, "                                                              \
      "1, 1, 0;\n}\n"                                                                              \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63])                                                                                \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1))

// The same with N = 256: accumulators d[0..127].
#define NVH_WGMMA_M64N256K16(TYPE)                                                                 \
  asm volatile(                                                                                    \
      "{\n.reg .pred acc;\nsetp.ne.b32 acc, %133, 0;\n"                                            \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE                                 \
      " "                                                                                          \
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%"   \
      "24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%"   \
      "46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%"   \
      "68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%"   \
      "90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%" \
      "110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}," \
      " "                                                                                          \
      "{%128,%129,%130,%131}, %132, acc, 1, 1, 0;\n}\n"                                            \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), \
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), \
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), \
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), \
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), \
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),          \
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),        \
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),        \
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),        \
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])         \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1))

struct DeviceCtx {
  __device__ __forceinline__ Dim3 thread_idx() const {
    return {threadIdx.x, threadIdx.y, threadIdx.z};
  }
  __device__ __forceinline__ Dim3 block_idx() const { return {blockIdx.x, blockIdx.y, blockIdx.z}; }
  __device__ __forceinline__ Dim3 block_dim() const { return {blockDim.x, blockDim.y, blockDim.z}; }
  __device__ __forceinline__ Dim3 grid_dim() const { return {gridDim.x, gridDim.y, gridDim.z}; }
  __device__ __forceinline__ uint32_t linear_thread() const {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  }
  __device__ __forceinline__ uint32_t lane() const { return linear_thread() % 32; }
  __device__ __forceinline__ uint32_t warp() const { return linear_thread() / 32; }

  __device__ __forceinline__ uint32_t shfl_xor(uint32_t v, int lane_mask) const {
    return __shfl_xor_sync(0xFFFFFFFFu, v, lane_mask);
  }
  __device__ __forceinline__ float shfl_xor(float v, int lane_mask) const {
    return __shfl_xor_sync(0xFFFFFFFFu, v, lane_mask);
  }
  __device__ __forceinline__ uint32_t shfl_idx(uint32_t v, int src_lane) const {
    return __shfl_sync(0xFFFFFFFFu, v, src_lane);
  }
  __device__ __forceinline__ float shfl_idx(float v, int src_lane) const {
    return __shfl_sync(0xFFFFFFFFu, v, src_lane);
  }
  // Programmatic dependent launch (PTX griddepcontrol, sm_90 on): wait until
  // the grid before this one has finished and its writes are visible; let
  // the grid after this one be launched. Below sm_90 a launch never
  // overlaps (launch_on_cuda), so there is nothing to wait for.
  __device__ __forceinline__ void wait_prior_grid() const {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  }
  __device__ __forceinline__ void launch_dependents() const {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  }
  // Global atomics and fences, for blocks that hand work to one another (a
  // tile's last block to arrive sums what the others left). atom.inc: the
  // old value, and the counter wraps to 0 once it reaches `wrap_at`.
  // __threadfence(): this thread's global accesses before it are seen by
  // every thread of the device before its accesses after it.
  __device__ __forceinline__ uint32_t atomic_inc_global(uint32_t* counter, uint32_t wrap_at) const {
    return atomicInc(counter, wrap_at);
  }
  __device__ __forceinline__ void fence_global() const { __threadfence(); }
  // Until *counter >= target: a relaxed load at device scope in a loop,
  // sleeping a little between tries so the spinning warp leaves the issue
  // slots to the blocks it waits for. Only in a co-resident launch
  // (LaunchShape::co_resident); the caller fences before it reads what the
  // blocks it waited for wrote (the fence orders those reads after the load
  // that saw their arrivals).
  __device__ __forceinline__ void wait_global_at_least(const uint32_t* counter,
                                                       uint32_t target) const {
    for (;;) {
      uint32_t seen;
      asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(counter) : "memory");
      if (seen >= target) return;
      __nanosleep(64);
    }
  }
  // Thread-block clusters (LaunchShape::cluster, sm_90): the block's rank
  // in its cluster; the cluster's barrier, every thread of every block
  // (arrive with release, wait with acquire: what a block wrote to its
  // shared memory before it is seen by the others' reads after it); and the
  // generic address of the byte at p's offset in the shared memory of the
  // cluster's block `rank`, which generic loads read (distributed shared
  // memory). Below sm_90 a launch has no clusters (launch_on_cuda refuses
  // one): rank 0, nothing to meet, p itself.
  __device__ __forceinline__ uint32_t cluster_rank() const {
#if __CUDA_ARCH__ >= 900
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
#else
    return 0;
#endif
  }
  __device__ __forceinline__ void cluster_sync() const {
#if __CUDA_ARCH__ >= 900
    asm volatile(
        "barrier.cluster.arrive.release.aligned;\n\t"
        "barrier.cluster.wait.acquire.aligned;" ::
            : "memory");
#endif
  }
  template <class T>
  __device__ __forceinline__ T* map_shared_rank(T* p, uint32_t rank) const {
#if __CUDA_ARCH__ >= 900
    uint64_t mapped;
    asm volatile("mapa.u64 %0, %1, %2;" : "=l"(mapped) : "l"(p), "r"(rank));
    return reinterpret_cast<T*>(mapped);
#else
    return p;
#endif
  }
  __device__ __forceinline__ void sync_threads() const { __syncthreads(); }
  // Barrier of the warp's lanes, which also orders their shared-memory
  // accesses (one lane reading what another copied in).
  __device__ __forceinline__ void sync_warp() const { __syncwarp(); }

  template <class T>
  __device__ __forceinline__ T* shared_mem() const {
    extern __shared__ __align__(16) unsigned char nvh_dynamic_shared[];
    return reinterpret_cast<T*>(nvh_dynamic_shared);
  }

  // Asynchronous 16-byte global -> shared copies (sm_80+): issued, grouped by
  // commit, and waited for until at most kPending groups are still in flight.
  __device__ __forceinline__ void cp_async16(void* shared_dst, const void* global_src) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(global_src)
                 : "memory");
#else
    *static_cast<uint4*>(shared_dst) = *static_cast<const uint4*>(global_src);
#endif
  }
  // The same, or with read false 16 zero bytes and no read at all
  // (cp.async's src-size 0): for rows past an operand's end, which cost no
  // traffic and no hot spot, where copying one row many times did.
  __device__ __forceinline__ void cp_async16_or_zero(void* shared_dst, const void* global_src,
                                                     bool read) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(global_src),
                 "r"(read ? 16u : 0u)
                 : "memory");
#else
    *static_cast<uint4*>(shared_dst) =
        read ? *static_cast<const uint4*>(global_src) : uint4{0, 0, 0, 0};
#endif
  }
  __device__ __forceinline__ void cp_async4(void* shared_dst, const void* global_src) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(global_src)
                 : "memory");
#else
    *static_cast<uint32_t*>(shared_dst) = *static_cast<const uint32_t*>(global_src);
#endif
  }
  __device__ __forceinline__ void cp_async_commit() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
  }
  template <int kPending>
  __device__ __forceinline__ void cp_async_wait() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
  }

  // sm_90a's warpgroup mma: wgmma.mma_async.sync.aligned.m64n128k16.f32 with
  // A from registers and B from shared memory, accumulating (scale-d 1).
  // A: warp i of the warpgroup holds rows 16i..16i+15 as mma.m16n8k16's A
  // fragment. B (16 k x 128 columns) through a descriptor with the
  // 128-byte swizzle, K-major: column c's 16 k are 32 bytes of a 128-byte
  // row, rows in groups of 8 1024 bytes apart (stride byte offset 1024; the
  // leading byte offset is unused with this swizzle), and the 16-byte chunk
  // j of row r at chunk j ^ (r % 8). `b_tile` points at k0 of column 0: a
  // 1024-byte-aligned tile plus 32 bytes per 16 k. Accumulator i of a
  // thread (warp w, lane g * 4 + t): row 16w + g + 8 ((i % 4) >= 2), column
  // 8 (i / 4) + 2t + i % 2. wgmma_fence before the first wgmma of a batch
  // (after the registers were written), wgmma_commit closes a group,
  // wgmma_wait<n> waits until at most n groups are in flight; until then
  // neither its registers nor the shared memory it reads may change.
  // N = 128 and N = 256 are written out (the ones the kernels use); N =
  // 256 is the same layout over 256 columns, accumulators d[0..127].
  __device__ __forceinline__ void wgmma_fence() const {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#else
    __trap();  // the plans send wgmma kernels to sm_90a only
#endif
  }
  template <int kN>
  __device__ __forceinline__ void wgmma_m64k16(float* d, const uint32_t a[4], const void* b_tile,
                                               HalfKind kind) const {
    static_assert(kN == 128 || kN == 256, "device_ctx.cuh writes out wgmma for N = 128 and 256");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    const uint64_t at = static_cast<uint64_t>(__cvta_generic_to_shared(b_tile));
    const uint64_t desc = ((at & 0x3FFFFu) >> 4) | (uint64_t{1} << 16) |
                          (uint64_t{1024 >> 4} << 32) | (uint64_t{1} << 62);
    if constexpr (kN == 256) {
      if (kind == HalfKind::fp16) {
        NVH_WGMMA_M64N256K16("f16");
      } else {
        NVH_WGMMA_M64N256K16("bf16");
      }
    } else if (kind == HalfKind::fp16) {
      NVH_WGMMA_M64N128K16("f16");
    } else {
      NVH_WGMMA_M64N128K16("bf16");
    }
#else
    (void)d, (void)a, (void)b_tile, (void)kind;
    __trap();
#endif
  }
  __device__ __forceinline__ void wgmma_commit() const {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#else
    __trap();
#endif
  }
  template <int kPending>
  __device__ __forceinline__ void wgmma_wait() const {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
#else
    __trap();
#endif
  }
  // fence.proxy.async.shared::cta: this thread's generic-proxy writes to
  // shared memory (st.shared, cp.async) become visible to the async proxy
  // (wgmma's operand reads) once a barrier orders them.
  __device__ __forceinline__ void fence_proxy_async() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#else
    __trap();
#endif
  }

  // mbarrier (sm_80 on) in shared memory, CTA scope: init with the number
  // of arrivals a phase takes; arrive (release); wait until the phase of
  // parity `parity` has completed (try_wait.parity in a loop, acquire).
  // An init is seen by the block's other threads after a barrier.
  __device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t count) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(bar));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(at), "r"(count) : "memory");
#else
    (void)bar, (void)count;
    __trap();
#endif
  }
  __device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(bar));
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(at) : "memory");
#else
    (void)bar;
    __trap();
#endif
  }
  __device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(bar));
    uint32_t done = 0;
    do {
      asm volatile(
          "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
          "selp.u32 %0, 1, 0, p;\n}\n"
          : "=r"(done)
          : "r"(at), "r"(parity)
          : "memory");
    } while (!done);
#else
    (void)bar, (void)parity;
    __trap();  // try_wait is sm_90's; the plans send mbarrier kernels to sm_90a only
#endif
  }
  // cp.async.mbarrier.arrive.noinc: an arrival on `bar` once every
  // cp.async this thread issued before it has landed (counted among the
  // arrivals the barrier's init expects). The copies are then visible to
  // the threads that wait on the phase.
  __device__ __forceinline__ void cp_async_mbarrier_arrive(uint64_t* bar) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(bar));
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(at) : "memory");
#else
    (void)bar;
    __trap();
#endif
  }
  // mbarrier.arrive.expect_tx: an arrival on `bar` that also raises the
  // phase's transaction count by `bytes`, which the TMA's copies on the
  // barrier count down as they land; the phase completes once every
  // arrival is in and the count is back to 0.
  __device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(bar));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(at), "r"(bytes)
                 : "memory");
#else
    (void)bar, (void)bytes;
    __trap();  // the plans send TMA kernels to sm_90a only
#endif
  }
  // prefetch.tensormap: brings `map`'s descriptor into the TMA unit's cache
  // ahead of the first tma_load_2d that names it.
  __device__ __forceinline__ void prefetch_tensor_map(const TensorMap2d& map) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map.encoded))
                 : "memory");
#else
    (void)map;
    __trap();
#endif
  }
  // cp.async.bulk.tensor.2d (the TMA): the box of `map` whose first element
  // is column `col`, row `row` (elements; past the matrix: zeros) into
  // shared memory at `shared_dst` (128-byte aligned), laid out as the map
  // says (tensor_map.h); its bytes count down `bar`'s transaction count as
  // they land. `map` must be a __grid_constant__ parameter's (or in global
  // memory).
  __device__ __forceinline__ void tma_load_2d(void* shared_dst, const TensorMap2d& map, int32_t col,
                                              int32_t row, uint64_t* bar) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
    const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(bar));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map.encoded)), "r"(col), "r"(row), "r"(at)
        : "memory");
#else
    (void)shared_dst, (void)map, (void)col, (void)row, (void)bar;
    __trap();
#endif
  }
  // tma_load_2d with an L2 hint for data read once (a weight stream): its
  // lines are the L2's first to go (createpolicy evict_first), so that what
  // is read again (the activations every tile reads) stays. On the H200 it
  // made prefill_fused_wgmma 0.3 to 5.6 % faster at M = 128 and 256 on seven
  // weight shapes, none slower (PERF.md, 2026-12-04); storing the K slices'
  // parts evict_last as well made the split plans 2 to 5 % slower (not kept).
  __device__ __forceinline__ void tma_load_2d_streaming(void* shared_dst, const TensorMap2d& map,
                                                        int32_t col, int32_t row,
                                                        uint64_t* bar) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
    const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(bar));
    uint64_t policy;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map.encoded)), "r"(col), "r"(row), "r"(at), "l"(policy)
        : "memory");
#else
    (void)shared_dst, (void)map, (void)col, (void)row, (void)bar;
    __trap();
#endif
  }
  // ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 (sm_75+): lane l gives
  // the 16-byte row l % 8 of matrix l / 8; out[i] is lane l's pair of
  // matrix i: row l / 4, columns 2 (l % 4) and + 1, or with kTranspose
  // column l / 4, rows 2 (l % 4) and + 1.
  template <bool kTranspose>
  __device__ __forceinline__ void ldmatrix_x4(uint32_t out[4], const void* shared_row) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
    const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(shared_row));
    if constexpr (kTranspose) {
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                   : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3])
                   : "r"(at));
    } else {
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                   : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3])
                   : "r"(at));
    }
#else
    (void)out;
    (void)shared_row;
    __trap();  // the dispatcher never sends an mma route below sm_80
#endif
  }

  // mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 (sm_80+).
  __device__ __forceinline__ void mma_m16n8k16(float d[4], const uint32_t a[4], const uint32_t b[2],
                                               const float c[4], HalfKind kind) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (kind == HalfKind::fp16) {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%10,%11,%12,%13};\n"
          : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
            "f"(c[2]), "f"(c[3]));
    } else {
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%10,%11,%12,%13};\n"
          : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
            "f"(c[2]), "f"(c[3]));
    }
#else
    __trap();  // the dispatcher never sends the mma route below sm_80
#endif
  }
};

// Threads one multiprocessor of the architecture being compiled holds:
// 1536 on sm_86, sm_87, sm_89 and sm_120, 2048 on the others this code
// builds for (sm_80, sm_90, sm_100).
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || \
                               __CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1200)
constexpr int kArchMaxThreadsPerSM = 1536;
#else
constexpr int kArchMaxThreadsPerSM = 2048;
#endif

// Blocks a kernel asks to fit on one multiprocessor (Kernel::kMinBlocksPerSM
// if it names one, else 1), at most what the architecture's threads allow
// (ptxas ignores a larger one, with a warning: PrefillScalarOn<uint32_t>'s 8
// blocks of 256 on sm_120a): the compiler then caps registers to allow it.
template <class Kernel, class = void>
struct MinBlocksPerSM {
  static constexpr int value = 1;
};
template <class Kernel>
struct MinBlocksPerSM<Kernel, std::void_t<decltype(Kernel::kMinBlocksPerSM)>> {
  static constexpr int fit = kArchMaxThreadsPerSM / static_cast<int>(Kernel::kMaxBlockThreads);
  static_assert(fit >= 1, "a block of at most 1024 threads fits any multiprocessor");
  static constexpr int value = Kernel::kMinBlocksPerSM < fit ? Kernel::kMinBlocksPerSM : fit;
};

// Params that list tensor maps (a member tensor_maps(): tensor_map.h).
template <class Params, class = void>
struct HasTensorMaps : std::false_type {};
template <class Params>
struct HasTensorMaps<Params, std::void_t<decltype(std::declval<Params&>().tensor_maps())>>
    : std::true_type {};

// The one __global__ wrapper every route uses: the kernel body, given the
// device context. Kernel::body is a __host__ __device__ template;
// Kernel::kMaxBlockThreads bounds the block so the compiler budgets registers.
template <class Kernel>
__global__ void __launch_bounds__(Kernel::kMaxBlockThreads, MinBlocksPerSM<Kernel>::value)
    run_kernel_on_device(const typename Kernel::Params params) {
  DeviceCtx ctx;
  Kernel::body(ctx, params);
}

// The same for kernels with tensor maps: the parameters __grid_constant__,
// so the TMA reads a map where it lies, by address (no local copy). Only
// these kernels: made the default, it changed the SASS of every other
// kernel (the mma.sync fused kernels ran 4-9 % slower on the H200,
// 2026-12-03).
template <class Kernel>
__global__ void __launch_bounds__(Kernel::kMaxBlockThreads, MinBlocksPerSM<Kernel>::value)
    run_kernel_with_maps_on_device(const __grid_constant__ typename Kernel::Params params) {
  DeviceCtx ctx;
  Kernel::body(ctx, params);
}

// The wrapper a kernel launches through.
template <class Kernel>
constexpr auto device_entry() {
  if constexpr (HasTensorMaps<typename Kernel::Params>::value) {
    return &run_kernel_with_maps_on_device<Kernel>;
  } else {
    return &run_kernel_on_device<Kernel>;
  }
}

}  // namespace nvh
