// The GPU side of the kernel vocabulary (kernel_ctx.h): every member is the
// CUDA builtin or instruction it names, so a kernel body compiled with
// DeviceCtx is the kernel one would have written by hand.
#pragma once

#if !defined(__CUDACC__)
#error "device_ctx.cuh is compiled by nvcc only"
#endif

#include <cstdint>
#include <type_traits>

#include "harness/kernel_ctx.h"

namespace nvh {

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

// Blocks a kernel asks to fit on one multiprocessor (Kernel::kMinBlocksPerSM
// if it names one, else 1): the compiler then caps registers to allow it.
template <class Kernel, class = void>
struct MinBlocksPerSM {
  static constexpr int value = 1;
};
template <class Kernel>
struct MinBlocksPerSM<Kernel, std::void_t<decltype(Kernel::kMinBlocksPerSM)>> {
  static constexpr int value = Kernel::kMinBlocksPerSM;
};

// The one __global__ wrapper every route uses: the kernel body, given the
// device context. Kernel::body is a __host__ __device__ template;
// Kernel::kMaxBlockThreads bounds the block so the compiler budgets registers.
template <class Kernel>
__global__ void __launch_bounds__(Kernel::kMaxBlockThreads, MinBlocksPerSM<Kernel>::value)
    run_kernel_on_device(const typename Kernel::Params params) {
  DeviceCtx ctx;
  Kernel::body(ctx, params);
}

}  // namespace nvh
