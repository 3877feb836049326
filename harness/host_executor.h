// The host executor: runs a CUDA-style grid of a kernel body on the CPU, so
// that CI machines without a GPU execute (and measure the coverage of) the
// same kernel source the GPU runs.
//
// Blocks are independent, as on the GPU, and are spread over worker threads.
// Inside a block, kernels that use warp collectives or barriers run every
// thread as a fiber (Boost.Context): a thread that reaches a shuffle, an mma
// step or sync_threads() parks until the threads it waits for arrive, exactly
// the rendezvous the hardware performs. Kernels without collectives run their
// threads as a plain loop.
//
// Every memory access a kernel makes through the portable layer is checked
// against the GPU's rules while it runs here (host_memcheck.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <typeinfo>
#include <vector>

#include "harness/host_memcheck.h"
#include "harness/kernel_ctx.h"
#include "harness/tensor_map.h"

namespace nvh {

class HostBlock;

class HostCtx {
 public:
  Dim3 thread_idx() const { return thread_; }
  Dim3 block_idx() const { return block_; }
  Dim3 block_dim() const { return block_dim_; }
  Dim3 grid_dim() const { return grid_dim_; }
  uint32_t lane() const { return linear_thread_ % 32; }
  uint32_t warp() const { return linear_thread_ / 32; }

  uint32_t shfl_xor(uint32_t v, int lane_mask);
  float shfl_xor(float v, int lane_mask);
  uint32_t shfl_idx(uint32_t v, int src_lane);
  float shfl_idx(float v, int src_lane);
  void sync_threads();
  void sync_warp();

  template <class T>
  T* shared_mem() const {
    return reinterpret_cast<T*>(shared_);
  }

  // The GPU's asynchronous copies, done at once, and checked like the
  // portable layer: the source in global memory, the destination in shared
  // memory, both aligned to the copy's size. In blocks run as fibers the
  // commit groups and waits are tracked too (host_memcheck.h,
  // CpAsyncShadow): a kernel may read a copy only once its wait (and, from
  // another thread, a barrier after it) says it has landed.
  void cp_async16(void* shared_dst, const void* global_src) {
    cp_async(shared_dst, global_src, 16);
  }
  void cp_async4(void* shared_dst, const void* global_src) { cp_async(shared_dst, global_src, 4); }
  // With read false: 16 zero bytes, the source neither read nor checked.
  void cp_async16_or_zero(void* shared_dst, const void* global_src, bool read) {
    cp_async(shared_dst, global_src, 16, read);
  }
  void cp_async_commit() {
    if (order_.cp_async) order_.cp_async->committed(linear_thread_);
  }
  template <int kPending>
  void cp_async_wait() {
    static_assert(kPending >= 0, "cp.async.wait_group takes a count of groups");
    if (order_.cp_async) order_.cp_async->waited(linear_thread_, kPending);
  }

  // One warp-wide ldmatrix.m8n8.x4 (device_ctx.cuh says which lane gets
  // what): every lane's row address is checked as a 16-byte shared-memory
  // load (memcheck), then each lane takes its pairs from the rows the other
  // lanes named.
  template <bool kTranspose>
  void ldmatrix_x4(uint32_t out[4], const void* shared_row) {
    ldmatrix_x4(out, shared_row, kTranspose);
  }
  void ldmatrix_x4(uint32_t out[4], const void* shared_row, bool transpose);

  // One warp-wide mma.sync.m16n8k16 (fp16/bf16 in, fp32 accumulate) with the
  // PTX fragment layout. Each output is c plus the 16 products summed in k
  // order with fmaf: the tensor core's internal order and rounding are not
  // specified, so host and GPU agree bit for bit only when every partial sum
  // is exact (the exact mode of the tests).
  void mma_m16n8k16(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4],
                    HalfKind kind);

  // Programmatic dependent launch. Grids run one after another here, so
  // there is nothing to wait for; what is checked is the rule: in a launch
  // with overlaps_prior_grid, a thread's global access before its
  // wait_prior_grid() is a violation (memcheck), as it is a race on the GPU.
  void wait_prior_grid() { order_.awaiting_prior_grid = false; }
  void launch_dependents() {
    if (order_.block_triggered_dependents) *order_.block_triggered_dependents = true;
  }

  // Global atomics and fences: a real atomic (blocks run concurrently on
  // the worker threads) and a real fence, and the rules of that pattern
  // checked (host_memcheck.h): the block's stores before the atomic are
  // fenced (by the storing thread, or, the fence being cumulative, by the
  // atomic's thread after a block barrier that follows them), and a fence
  // follows the atomic before the block reads on.
  uint32_t atomic_inc_global(uint32_t* counter, uint32_t wrap_at);
  void fence_global();
  // In a co-resident launch (LaunchShape::co_resident, every block on its
  // own worker thread here) the thread parks until the counter holds
  // `target` or more; a grid whose every block so waits, with no atomic to
  // change a counter, fails as a deadlock. Anywhere else it fails (on the
  // GPU the block waited for may never run), and after it, as after an
  // atomic, the block reads global memory only once one of its threads
  // has fenced.
  void wait_global_at_least(const uint32_t* counter, uint32_t target);

  // sm_90a's warpgroup mma, wgmma.mma_async.m64nNk16 with fp32 accumulators,
  // A (64 x 16, four warps' m16n8k16 A fragments) from registers and B
  // (16 x N) from shared memory; device_ctx.cuh gives the layouts. The four
  // warps of a warpgroup (warps 4i..4i+3) issue each one together. As on the
  // GPU the result is there only after wgmma_wait: each wgmma is recorded
  // at issue and computed when a wait retires its group (each output its
  // accumulator plus 16 products in k order with fmaf, as mma_m16n8k16).
  // What the GPU leaves undefined fails here (std::logic_error, or
  // MemoryViolation for memory):
  //   - a wgmma without a wgmma_fence since the thread's last commit;
  //   - A registers or accumulators changed while their wgmma is in flight
  //     (compared at the wait with their values at issue);
  //   - shared memory a wgmma reads written while it is in flight, or not
  //     yet visible to the async proxy at issue (no fence_proxy_async by its
  //     writer, or no barrier since: host_memcheck.h);
  //   - a B tile that is not 1024-byte aligned (the swizzle's atom);
  //   - a thread that exits with a wgmma not waited for.
  void wgmma_fence() { wgmma_fenced_ = true; }
  template <int kN>
  void wgmma_m64k16(float* acc, const uint32_t a[4], const void* b_tile, HalfKind kind) {
    static_assert(kN % 8 == 0 && kN >= 8 && kN <= 256, "wgmma's N is a multiple of 8 up to 256");
    wgmma(acc, a, b_tile, kN, kind);
  }
  void wgmma_commit();
  template <int kPending>
  void wgmma_wait() {
    wgmma_wait(kPending);
  }
  void fence_proxy_async();

  // mbarriers in shared memory, held by the executor beside the block (by
  // shared offset), not in the 8 bytes themselves. A phase completes when
  // `count` arrivals have come; mbarrier_wait(bar, parity) parks the thread
  // until the phase of that parity has completed (a block whose threads all
  // wait then is a deadlock, as at a barrier). A completed phase publishes
  // what its arriving threads had made visible before arriving: their
  // landed cp.async copies and their fence_proxy_async (host_memcheck.h).
  // A completed phase also carries the arriving threads' unfenced writes to
  // shared memory to the async proxy as far as a fence_proxy_async by a
  // thread after the phase makes them visible to it (the reader's fence).
  // What the GPU leaves undefined fails here (std::logic_error): a barrier
  // not 8-byte aligned in shared memory, used before its init, or used by
  // another thread before a block barrier since the init; a count of 0 or
  // past the hardware's 2^20 - 1.
  void mbarrier_init(uint64_t* bar, uint32_t count);
  void mbarrier_arrive(uint64_t* bar);
  void mbarrier_wait(uint64_t* bar, uint32_t parity);
  // cp.async.mbarrier.arrive.noinc: here every cp.async the thread issued
  // has landed already, so its copies count as landed and it arrives now.
  void cp_async_mbarrier_arrive(uint64_t* bar);

  // sm_90's TMA (tensor_map.h). mbarrier_arrive_expect_tx arrives and
  // raises the phase's transaction count by `bytes`; tma_load_2d copies the
  // box at (col, row) of `map` into shared memory at once, zeros past the
  // matrix, swizzled as the map says, each element read checked like
  // cp.async's, and counts its bytes down on `bar`. A phase completes when
  // its arrivals are in and its count is 0. Until then the box is in
  // flight; once it completes, the box is visible (to loads, stores and
  // wgmma alike, no proxy fence needed) to the threads ordered after that
  // phase (host_memcheck.h, TmaShadow). What the GPU leaves undefined fails
  // here: a box in shared memory not 128-byte aligned (with a swizzle, not
  // aligned to its atom: 1024 bytes for 128-byte rows, 512 for 64-byte); a read or write of it
  // before its phase completed, or by a thread not ordered after that phase; a second box into it
  // in flight; a box over bytes another thread read, issued by a thread not ordered after that
  // read (TmaShadow); a phase whose copies bring more bytes than its expect_tx once every arrival
  // is in (on the GPU it may complete before they land); an arrival past the count; a block that
  // ends with a copy in flight. One whose expect_tx is too large never completes: a deadlock, whose
  // message names the bytes the barrier still waits for.
  void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes);
  // Thread-block clusters (LaunchShape::cluster). A cluster's blocks take
  // turns on one worker thread, their fibers resumed block after block in
  // rounds, so any may wait for the others. cluster_sync() parks the thread
  // until every thread of every block of the cluster has arrived (one that
  // exited never does: the others' wait is a deadlock, as the GPU's would
  // hang), and orders shared memory as a block barrier does, in every block
  // of the cluster. map_shared_rank(p, rank): the same offset in the shared
  // memory of the cluster's block `rank`, which the block reads with the
  // generic loads, each read checked for its order against the owner's
  // writes and exit (host_memcheck.h, ClusterShadow); p must lie in the
  // block's own shared memory and rank below the cluster's blocks (else
  // std::logic_error, as mapa is undefined there). Without clusters: rank
  // 0 of a cluster of one.
  uint32_t cluster_rank() const { return cluster_rank_; }
  void cluster_sync();
  template <class T>
  T* map_shared_rank(T* p, uint32_t rank) const {
    return static_cast<T*>(map_shared(p, rank));
  }

  // A hint on the GPU; nothing to do here.
  void prefetch_tensor_map(const TensorMap2d&) {}
  void tma_load_2d(void* shared_dst, const TensorMap2d& map, int32_t col, int32_t row,
                   uint64_t* bar);
  // tma_load_2d: the L2 hint (device_ctx.cuh) is the GPU's alone.
  void tma_load_2d_streaming(void* shared_dst, const TensorMap2d& map, int32_t col, int32_t row,
                             uint64_t* bar) {
    tma_load_2d(shared_dst, map, col, row, bar);
  }

 private:
  friend class HostBlock;
  friend void run_block_plain(const LaunchShape&, Dim3, unsigned char*,
                              const std::function<void(HostCtx&)>&, memcheck::Scope&);
  HostBlock& collectives(const char* what);
  // collectives(), for an instruction every lane of the warp must join.
  HostBlock& whole_warp(const char* what);
  // collectives(), for an instruction all 128 threads of the warpgroup join.
  HostBlock& whole_warpgroup(const char* what);
  struct MbarrierAt {
    HostBlock& block;
    std::size_t offset;  // in the block's shared memory
  };
  MbarrierAt mbarrier_of(const uint64_t* bar, const char* what);
  void wgmma(float* acc, const uint32_t a[4], const void* b_tile, int n, HalfKind kind);
  void* map_shared(const void* p, uint32_t rank) const;
  void wgmma_wait(int pending);
  // read false: zeros in place of the source (cp.async's src-size 0).
  static void cp_async(void* shared_dst, const void* global_src, uint32_t bytes, bool read = true) {
    if (read) {
      memcheck::check_access(global_src, bytes, memcheck::Op::cp_async_read,
                             memcheck::Space::global);
    }
    memcheck::check_access(shared_dst, bytes, memcheck::Op::cp_async_write,
                           memcheck::Space::shared);
    if (read) {
      std::memcpy(shared_dst, global_src, bytes);
    } else {
      std::memset(shared_dst, 0, bytes);
    }
  }

  Dim3 thread_, block_, block_dim_, grid_dim_;
  uint32_t linear_thread_ = 0;
  uint32_t cluster_rank_ = 0;
  memcheck::ThreadOrder order_;  // what the memory checker holds this thread to
  unsigned char* shared_ = nullptr;
  HostBlock* block_state_ = nullptr;  // null when the kernel declared no collectives
  bool wgmma_fenced_ = false;         // a wgmma_fence since this thread's last commit
  uint64_t fenced_after_ =
      0;  // 1 + the block barriers completed at its last fence_global (0: none)
};

using HostThreadBody = std::function<void(HostCtx&)>;

// Runs every thread of the grid; rethrows the first exception a thread threw.
// Throws std::invalid_argument for an empty or oversized launch shape,
// std::runtime_error when the threads of a block deadlock at a barrier, and
// MemoryViolation (a std::runtime_error) when a thread breaks a GPU memory
// rule; `kernel` names the kernel in that message.
void run_grid_on_host(const LaunchShape& shape, const HostThreadBody& body,
                      const char* kernel = "(unnamed host grid)");

// The grids run_grid_on_host runs while a HostGridLog is alive, in launch
// order: for tests that a runner launches the kernels its plan names and no
// more (a launch made twice gives the same bits in twice the time, so only
// a count sees it). One log at a time. Hand-written: a list under a mutex.
struct HostGrid {
  std::string kernel;  // kernel_name<Kernel>()
  Dim3 grid, cluster;
};
class HostGridLog {
 public:
  HostGridLog();
  ~HostGridLog();
  HostGridLog(const HostGridLog&) = delete;
  HostGridLog& operator=(const HostGridLog&) = delete;
  std::vector<HostGrid> grids() const;
  void record(HostGrid grid);  // run_grid_on_host's, as each grid starts

 private:
  mutable std::mutex mutex_;
  std::vector<HostGrid> grids_;
};

// The global-memory accesses kernels make in the host launches run while a
// HostAccessLog is alive, counted by kind and width: for tests that a kernel moves its
// bytes in the widths it was written for (a 4-byte store split into two of
// 2 bytes, or a 16-byte load into four of 4, gives the same bits in more
// instructions, so only a count sees it). Accesses to shared memory, the
// block's or a cluster's, are not counted. One log at a time.
// Hand-written: relaxed atomic counters each launch's memory check bumps.
class HostAccessLog {
 public:
  HostAccessLog();
  ~HostAccessLog();
  HostAccessLog(const HostAccessLog&) = delete;
  HostAccessLog& operator=(const HostAccessLog&) = delete;
  // Accesses of kind `op` and `width` bytes (1, 2, 4, 8 or 16; else 0).
  uint64_t global(memcheck::Op op, uint32_t width) const;

 private:
  memcheck::AccessCounts counts_;
};

// Worker threads used for blocks: NVFP4_HOST_THREADS if set, else the number
// of hardware threads. A co-resident launch takes one a block instead.
unsigned host_executor_threads();

// The most blocks a co-resident launch may have here (1024 unless set); a
// larger one throws NotCoResident, as a GPU does for a grid it cannot hold
// at once. Tests set it lower to take a kernel's other way.
uint32_t host_co_resident_blocks();
void set_host_co_resident_blocks(uint32_t blocks);

// A C++ type's name as written ("nvfp4::GemvScalarRows<4, 8>").
std::string demangled_name(const std::type_info& type);

// What memory-check messages call Kernel: its demangled type, which names the
// template arguments too, so no kernel keeps a name by hand.
template <class Kernel>
const char* kernel_name() {
  static const std::string name = demangled_name(typeid(Kernel));
  return name.c_str();
}

template <class Kernel>
void launch_on_host(const LaunchShape& shape, const typename Kernel::Params& params) {
  run_grid_on_host(
      shape, [&params](HostCtx& ctx) { Kernel::body(ctx, params); }, kernel_name<Kernel>());
}

}  // namespace nvh
