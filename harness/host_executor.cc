#include "harness/host_executor.h"

#include <algorithm>
#include <atomic>
#include <boost/context/fiber.hpp>
#include <boost/context/pooled_fixedsize_stack.hpp>
#include <boost/core/demangle.hpp>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "harness/portable_math.h"

namespace nvh {
namespace {

namespace ctx = boost::context;

constexpr uint32_t kWarpSize = 32;
constexpr uint32_t kWarpGroupSize = 128;  // wgmma's four warps
// Words a lane deposits for one collective: the largest is the mma step
// (4 A registers and 2 B registers; accumulators stay with their lane).
constexpr int kExchangeWords = 6;
// Kernel bodies are shallow; 256 KiB also covers unoptimised gcov builds.
constexpr std::size_t kFiberStackBytes = 256 * 1024;
// CUDA's limits, so a launch the GPU would refuse is refused here too.
constexpr uint32_t kMaxThreadsPerBlock = 1024;
constexpr uint32_t kMaxGridYZ = 65535;
constexpr uint64_t kMaxClusterBlocks = 8;  // the portable cluster size

std::string dim_text(Dim3 d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

void validate_shape(const LaunchShape& s) {
  const auto bad = [&](const std::string& what) {
    throw std::invalid_argument("run_grid_on_host: grid " + dim_text(s.grid) + " block " +
                                dim_text(s.block) + ": " + what);
  };
  if (s.grid.x == 0 || s.grid.y == 0 || s.grid.z == 0) bad("every grid extent must be positive");
  if (s.block.x == 0 || s.block.y == 0 || s.block.z == 0)
    bad("every block extent must be positive");
  if (s.grid.y > kMaxGridYZ || s.grid.z > kMaxGridYZ) bad("grid y and z are limited to 65535");
  if (uint64_t{s.block.x} * s.block.y * s.block.z > kMaxThreadsPerBlock)
    bad("a block holds at most 1024 threads");
  if (s.reads_shared_async && !s.uses_collectives)
    bad("reads_shared_async (wgmma) needs uses_collectives");
  if (s.co_resident && !s.uses_collectives)
    bad("co_resident (blocks that wait for one another) needs uses_collectives");
  if (is_clustered(s)) {
    const Dim3 c = s.cluster;
    if (c.x == 0 || c.y == 0 || c.z == 0 || s.grid.x % c.x != 0 || s.grid.y % c.y != 0 ||
        s.grid.z % c.z != 0 || uint64_t{c.x} * c.y * c.z > kMaxClusterBlocks) {
      bad("cluster " + dim_text(c) +
          ": each extent must be positive and divide the grid's, 8 blocks at most");
    }
    if (!s.uses_collectives)
      bad("a cluster (blocks that meet at cluster_sync) needs uses_collectives");
    if (s.co_resident) bad("co_resident and cluster together are not emulated");
  }
  if (s.independent_of_prior_grid && !s.overlaps_prior_grid)
    bad("independent_of_prior_grid qualifies overlaps_prior_grid, which is off");
}

// The footprint of the last grid run here where it recorded one
// (lets_dependents_overlap), else null: what the next launch, if independent
// of it, is checked against. Launches on the host run one after another.
std::mutex g_footprint_mutex;
std::shared_ptr<const memcheck::GridFootprint> g_last_footprint;

// The live HostGridLog (null: none).
std::atomic<HostGridLog*> g_grid_log{nullptr};

Dim3 unflatten(uint64_t i, Dim3 extent) {
  Dim3 d;
  d.x = static_cast<uint32_t>(i % extent.x);
  d.y = static_cast<uint32_t>((i / extent.x) % extent.y);
  d.z = static_cast<uint32_t>(i / (uint64_t{extent.x} * extent.y));
  return d;
}

// One mma.m16n8k16's operands as floats: A[row][k] (16 x 16) and B[k][col]
// (16 x 8), with the generation of the warp barrier they were decoded after.
struct MmaOperands {
  uint64_t generation = ~uint64_t{0};
  float a[16][16], b[16][8];
};

// One wgmma.m64nNk16 as its warpgroup issued it; computed when a wait
// retires its group (HostCtx::wgmma_m64k16).
struct WgmmaIssue {
  struct Lane {
    float* acc = nullptr;              // the thread's accumulators (n / 2 floats)
    const uint32_t* a_regs = nullptr;  // its A registers, as the kernel holds them
    uint32_t a[4] = {};                // their values at issue
    std::vector<float> acc_at_issue;
  };
  const unsigned char* b = nullptr;
  int n = 0;
  HalfKind kind = HalfKind::bf16;
  std::vector<uint16_t> b_at_issue;  // B[k][col] at issue, k-major
  Lane lanes[kWarpGroupSize];
};

// B[k][col] of a wgmma's shared tile (device_ctx.cuh): rows of 128 bytes,
// 8-row groups 1024 bytes apart, and the 128-byte swizzle, which XORs the
// address's 16-byte chunk bits (4-6) with its row bits (7-9).
const unsigned char* wgmma_b_element(const unsigned char* b, int k, int col) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(b) + uintptr_t(col / 8) * 1024 +
                       uintptr_t(col % 8) * 128 + uintptr_t(2 * k);
  return reinterpret_cast<const unsigned char*>(tma_swizzled(at, TmaSwizzle::b128));
}

std::atomic<uint32_t> g_co_resident_blocks{1024};  // host_co_resident_blocks()

}  // namespace

// The blocks of a co-resident launch (LaunchShape::co_resident), each on its
// own worker thread: a block whose every thread is parked, some of them
// waiting for a global counter (wait_global_at_least), sleeps here until
// some block's atomic changes a counter. When every live block sleeps so
// and nothing has changed, none ever will: a deadlock, reported by the
// block that sees it (the GPU would hang). Hand-written: the fibers' own
// scheduling is the executor's (HostBlock::run), not a library's.
class GridRendezvous {
 public:
  explicit GridRendezvous(uint64_t blocks) : live_(blocks) {}
  uint64_t changes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return changes_;
  }
  void changed() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++changes_;
    stuck_ = 0;  // every parked block has something new to look at
    wake_.notify_all();
  }
  void block_done() {
    std::lock_guard<std::mutex> lock(mutex_);
    --live_;
    wake_.notify_all();
  }
  void abort() {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    wake_.notify_all();
  }
  // Returns once a counter has changed since `seen`; throws when another
  // block failed, or when every live block is parked here with no change
  // since it looked (`waiting()` says what this one waits for, asked only
  // then). A block woken by a change is no longer stuck even before it runs
  // again: counting it would declare a deadlock while it is about to see the
  // change.
  template <class Describe>
  void park(uint64_t seen, const Describe& waiting) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (changes_ != seen) return;
    ++stuck_;
    for (;;) {
      if (stuck_ == live_ && !aborted_) {
        aborted_ = true;
        deadlock_ = "host executor: every live block of the co-resident grid (" +
                    std::to_string(live_) +
                    ") waits on a global counter that no block will change: " + waiting();
        wake_.notify_all();
      }
      if (aborted_) {
        if (changes_ == seen) --stuck_;
        // Every parked block reports the deadlock, so whichever is first says it.
        throw std::runtime_error(deadlock_.empty()
                                     ? "host executor: a block of the co-resident grid failed"
                                     : deadlock_);
      }
      wake_.wait(lock);
      if (changes_ != seen) return;  // changed() has taken it off stuck_
    }
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  uint64_t changes_ = 0, live_ = 0;
  uint64_t stuck_ = 0;  // blocks parked with no change since they looked
  bool aborted_ = false;
  std::string deadlock_;  // what the block that found the deadlock waited for
};

class HostBlock;

// A thread-block cluster's run (LaunchShape::cluster): its blocks by rank,
// which take turns on one worker thread (run_cluster), the barrier they
// meet at (cluster_sync: every thread of every block arrives), and the
// shadow of their reads of one another's shared memory.
struct ClusterRun {
  std::vector<HostBlock*> blocks;
  memcheck::ClusterShadow shadow;
  uint32_t threads = 0, arrived = 0;
  uint64_t generation = 0;
  // An arrival; the last one completes the barrier (ordering every block's
  // shared memory as its own barrier does) and starts the next generation.
  void arrive();
};

// Per-block state for kernels with collectives: the fibers, the barrier
// counters and the words lanes exchange through.
class HostBlock {
 public:
  explicit HostBlock(ctx::pooled_fixedsize_stack& stacks) : stacks_(stacks) {}

  void run(const LaunchShape& shape, Dim3 block, unsigned char* shared, const HostThreadBody& body,
           memcheck::Scope& scope, GridRendezvous* grid = nullptr);
  // run() in three steps, for a cluster's blocks, which take turns: start
  // makes the fibers; round resumes each live thread once (whom a memory
  // violation names set in `scope`) and returns how many are still live
  // (0 too once the block failed); finish checks what a block may not end
  // with, unless another block of the cluster failed (`quiet`), unwinds
  // the fibers and rethrows the block's failure.
  void start(const LaunchShape& shape, Dim3 block, unsigned char* shared,
             const HostThreadBody& body, GridRendezvous* grid = nullptr,
             ClusterRun* cluster = nullptr, uint32_t rank = 0);
  uint32_t round(memcheck::Scope& scope);
  void finish(bool quiet = false);
  bool failed() const { return error_ != nullptr; }
  void fail(std::exception_ptr e) {
    if (!error_) error_ = std::move(e);
  }
  uint64_t progress() const { return progress_; }
  uint32_t live_threads() const { return block_live_; }
  const unsigned char* shared() const { return shared_; }

  // cluster_sync: parks `thread` until the cluster's barrier completes.
  void cluster_barrier(uint32_t thread);
  // What a completed barrier orders in the block's shared memory: its own
  // barrier's effects, which the cluster's barrier has too.
  void barrier_effects();
  ClusterRun* cluster() const { return cluster_; }

  // wait_global_at_least: parks `thread` until the counter holds `target`
  // or more (a co-resident launch's blocks run on their own worker threads).
  void wait_global(uint32_t thread, const uint32_t* counter, uint32_t target);
  // What the last thread parked in wait_global waits for, in words.
  std::string describe_global_wait(Dim3 block) const;
  bool co_resident() const { return grid_ != nullptr; }
  GridRendezvous* grid() const { return grid_; }

  void warp_barrier(uint32_t thread);
  void block_barrier(uint32_t thread);
  uint32_t* words(uint32_t thread) { return warps_[thread / kWarpSize].words[thread % kWarpSize]; }
  const uint32_t* words_of(uint32_t thread, uint32_t lane) const {
    return warps_[thread / kWarpSize].words[lane];
  }
  uint32_t live_lanes(uint32_t thread) const { return warps_[thread / kWarpSize].live; }
  // After a sync_warp of `thread`'s warp, every lane had arrived: the copies
  // their waits landed before are the warp's now, and each lane has seen
  // what any of them had. Once a barrier, by its first lane past it (a later
  // lane's call would also publish what the first landed after it).
  void warp_synced(uint32_t thread) {
    const uint32_t w = thread / kWarpSize;
    if (warp_synced_generation_[w] == warps_[w].generation) return;
    warp_synced_generation_[w] = warps_[w].generation;
    cp_async_.warp_synced(w, warps_[w].generation);
    clocks_.join(w * kWarpSize, kWarpSize);
    race_.warp_synced(w);
  }
  // The operands of the mma the warp's lanes deposited, decoded by the first
  // lane past the barrier (one decode per mma, not one per lane).
  const MmaOperands& mma_operands(uint32_t thread, HalfKind kind);
  // A thread of the block with a global store no fence of its own follows,
  // or null.
  const HostCtx* unfenced_thread() const;
  // A global store by some thread of the block a global atomic by `atomic`
  // may not publish: one unfenced_thread() holds, or one a block barrier
  // ordered before `atomic` with no fence of `atomic`'s since that barrier
  // (a fence is cumulative: it publishes the stores ordered before it, the
  // pattern of one thread fencing for its block after a barrier). The
  // thread that made it, or null.
  const HostCtx* unfenced_for(const HostCtx& atomic) const;
  struct BarrierOrderedStore {
    uintptr_t address = 0;
    uint32_t width = 0, thread_plus_1 = 0;  // 0: none
    uint64_t generation = 0;                // the block barrier's that ordered it
  };
  const BarrierOrderedStore& barrier_ordered() const { return barrier_ordered_; }
  uint64_t generation() const { return block_generation_; }

  uint32_t live_in_warpgroup(uint32_t thread) const {
    return groups_[thread / kWarpGroupSize].live;
  }
  memcheck::AsyncProxyShadow& async_proxy() { return async_proxy_; }
  // wgmma: the warpgroup's threads each deposit their part, meet, and the
  // first past records the issue (HostCtx::wgmma_m64k16).
  void wgmma_issue(uint32_t thread, const WgmmaIssue::Lane& lane, const unsigned char* b, int n,
                   HalfKind kind, const unsigned char* shared);
  void wgmma_commit(uint32_t thread);
  void wgmma_wait(uint32_t thread, int pending);

  // mbarriers by shared offset (HostCtx::mbarrier_init).
  void mbarrier_init(uint32_t thread, std::size_t offset, uint32_t count);
  // An arrival, raising the phase's transaction count by expect_tx bytes.
  void mbarrier_arrive(uint32_t thread, std::size_t offset, uint32_t expect_tx = 0);
  void mbarrier_wait(uint32_t thread, std::size_t offset, uint32_t parity);
  // A TMA copy by `thread` into [dst, dst + bytes) of shared memory (offsets),
  // done already, on the mbarrier at `offset`: in flight until the phase
  // that its bytes count down completes.
  void tma_copied(uint32_t thread, std::size_t offset, std::size_t dst, uint32_t bytes);
  std::size_t shared_bytes() const { return shared_bytes_; }
  // Why the block may not end (a TMA copy still in flight), or "".
  std::string unfinished_copies() const;
  // What a deadlock leaves waiting on mbarriers' transaction counts, or "".
  std::string pending_transactions() const;

 private:
  struct Warp {
    uint32_t live = 0, arrived = 0;
    uint64_t generation = 0;
    uint32_t words[kWarpSize][kExchangeWords] = {};
    MmaOperands mma;  // the warp's mma operands as floats, decoded once per mma
  };

  struct WarpGroup {
    uint32_t live = 0, arrived = 0;
    uint64_t generation = 0;
    WgmmaIssue::Lane staged[kWarpGroupSize];  // each thread's part of the wgmma being issued
    std::vector<WgmmaIssue> issues;           // in issue order; [retired, size) in flight
    std::size_t retired = 0;
    std::size_t issued_by[kWarpGroupSize] = {};
    std::vector<std::size_t> group_ends[kWarpGroupSize];  // per thread: issues before each commit
  };
  struct MBarrier {
    uint32_t count = 0, pending = 0;
    // The phase's transaction count: expect_tx bytes less the bytes TMA
    // copies on it brought, and the granules those copies wrote.
    int64_t tx = 0;
    std::vector<uint32_t> tma_granules;
    uint32_t tma_source = 0;  // its copies' ReleaseClocks source (0: none yet)
    uint64_t completions = 0;
    uint32_t init_thread = 0;
    uint64_t init_generation = 0;  // block_generation_ at the init
    std::vector<bool> arrived;     // by thread, this phase
    // The arriving threads' clocks joined (ReleaseClocks): this phase's so
    // far, and the last completed phase of each parity (what a wait on it
    // acquires).
    std::vector<uint32_t> releasing, completed[2];
  };
  // The barrier at `offset` for `thread`'s `what`: initialized, and its init
  // seen by this thread (its own, or a block barrier since).
  MBarrier& mbarrier_at(uint32_t thread, std::size_t offset, const char* what);
  // The phase completes once its arrivals are in and its transaction count
  // is 0 (throws when the count went below 0 with every arrival in).
  void complete_if_done(MBarrier& m, std::size_t offset);
  void warpgroup_barrier(uint32_t thread);
  void retire(WarpGroup& g, std::size_t end, uint32_t thread);
  void yield(uint32_t thread) { sinks_[thread] = std::move(sinks_[thread]).resume(); }
  void wait_for(uint32_t thread, const uint64_t& generation);
  void thread_finished(uint32_t thread);
  template <class Group>
  void release_if_complete(Group& g);
  template <class Group>
  void arrive_and_wait(Group& g, uint32_t thread);
  void release_block_if_complete();

  ctx::pooled_fixedsize_stack& stacks_;
  std::vector<HostCtx> threads_;
  std::vector<ctx::fiber> fibers_, sinks_;
  std::vector<Warp> warps_;
  std::vector<WarpGroup> groups_;
  memcheck::AsyncProxyShadow async_proxy_;
  memcheck::CpAsyncShadow cp_async_;
  memcheck::ReleaseClocks clocks_;
  memcheck::TmaShadow tma_;
  memcheck::SharedRaceShadow race_;
  std::vector<uint64_t> warp_synced_generation_;  // per warp: its last sync_warp, once done
  bool tracks_async_proxy_ = false;
  std::map<std::size_t, MBarrier> mbarriers_;
  std::size_t shared_bytes_ = 0;
  uint32_t block_live_ = 0, block_arrived_ = 0;
  uint64_t block_generation_ = 0;
  uintptr_t atomic_unfenced_ = 0;        // ThreadOrder::block_atomic_unfenced of this block
  bool triggered_dependents_ = false;    // ThreadOrder::block_triggered_dependents of this block
  BarrierOrderedStore barrier_ordered_;  // the last, of the latest barrier that ordered one
  uint64_t progress_ = 0;  // arrivals and exits; a scheduling round without any is a deadlock
  GridRendezvous* grid_ = nullptr;  // a co-resident launch's (null otherwise)
  ClusterRun* cluster_ = nullptr;   // a clustered launch's (null otherwise)
  uint32_t rank_ = 0;               // the block's rank in it
  bool waits_before_exit_ = false;  // independent_of_prior_grid: each thread waits before it exits
  Dim3 block_;
  unsigned char* shared_ = nullptr;
  // Threads parked in wait_global, and what the last of them waits for
  // (put in words only for a deadlock's message).
  uint32_t global_waiters_ = 0;
  struct GlobalWait {
    uint32_t thread = 0, target = 0, held = 0;
    const uint32_t* counter = nullptr;
  } global_wait_;
  std::exception_ptr error_;
};

void HostBlock::run(const LaunchShape& shape, Dim3 block, unsigned char* shared,
                    const HostThreadBody& body, memcheck::Scope& scope, GridRendezvous* grid) {
  start(shape, block, shared, body, grid);
  for (uint32_t live = block_live_; live > 0 && !error_;) {
    const uint64_t before = progress_;
    const uint64_t counters_seen = grid_ ? grid_->changes() : 0;
    live = round(scope);
    if (!error_ && live > 0 && progress_ == before && global_waiters_ > 0) {
      // Threads wait on a counter other blocks raise: sleep until one changes.
      try {
        grid_->park(counters_seen, [&] { return describe_global_wait(block); });
      } catch (...) {
        error_ = std::current_exception();
      }
    } else if (!error_ && live > 0 && progress_ == before) {
      error_ = std::make_exception_ptr(std::runtime_error(
          "host executor: block " + dim_text(block) + ": " + std::to_string(live) +
          " threads wait at a barrier or collective that can never complete" +
          pending_transactions()));
    }
  }
  finish();
}

void HostBlock::start(const LaunchShape& shape, Dim3 block, unsigned char* shared,
                      const HostThreadBody& body, GridRendezvous* grid, ClusterRun* cluster,
                      uint32_t rank) {
  const uint32_t n = threads_per_block(shape);
  grid_ = grid;
  cluster_ = cluster;
  rank_ = rank;
  block_ = block;
  waits_before_exit_ = shape.independent_of_prior_grid;
  shared_ = shared;
  global_waiters_ = 0;
  threads_.assign(n, HostCtx{});
  fibers_.clear();
  fibers_.resize(n);
  sinks_.clear();
  sinks_.resize(n);
  warps_.assign((n + kWarpSize - 1) / kWarpSize, Warp{});
  for (uint32_t w = 0; w < warps_.size(); ++w)
    warps_[w].live = std::min(kWarpSize, n - w * kWarpSize);
  groups_.clear();
  groups_.resize((n + kWarpGroupSize - 1) / kWarpGroupSize);
  for (uint32_t g = 0; g < groups_.size(); ++g)
    groups_[g].live = std::min(kWarpGroupSize, n - g * kWarpGroupSize);
  tracks_async_proxy_ = shape.reads_shared_async;
  clocks_.reset(n);
  if (tracks_async_proxy_) async_proxy_.reset(shape.shared_bytes, n, clocks_);
  warp_synced_generation_.assign(warps_.size(), ~uint64_t{0});
  cp_async_.reset(shape.shared_bytes, n, clocks_);
  tma_.reset(shape.shared_bytes, n, clocks_);
  race_.reset(shape.shared_bytes, n, clocks_);
  mbarriers_.clear();
  shared_bytes_ = shape.shared_bytes;
  block_live_ = n;
  block_arrived_ = 0;
  atomic_unfenced_ = 0;
  triggered_dependents_ = false;
  barrier_ordered_ = {};
  error_ = nullptr;

  for (uint32_t t = 0; t < n; ++t) {
    HostCtx& c = threads_[t];
    c.thread_ = unflatten(t, shape.block);
    c.block_ = block;
    c.block_dim_ = shape.block;
    c.grid_dim_ = shape.grid;
    c.linear_thread_ = t;
    c.cluster_rank_ = rank;
    c.order_.awaiting_prior_grid = shape.overlaps_prior_grid;
    c.order_.block_atomic_unfenced = &atomic_unfenced_;
    c.order_.block_triggered_dependents = &triggered_dependents_;
    c.order_.async_proxy = tracks_async_proxy_ ? &async_proxy_ : nullptr;
    c.order_.linear_thread = t;
    c.order_.cp_async = &cp_async_;
    c.order_.tma = &tma_;
    c.order_.race = &race_;
    c.shared_ = shared;
    c.block_state_ = this;
    fibers_[t] = ctx::fiber(std::allocator_arg, stacks_, [this, t, &body](ctx::fiber&& sink) {
      sinks_[t] = std::move(sink);
      try {
        body(threads_[t]);
        if (waits_before_exit_ && threads_[t].order_.awaiting_prior_grid) {
          memcheck::t_current->fail_exit_before_wait();  // the worker's scope, on this thread
        }
      } catch (const ctx::detail::forced_unwind&) {
        throw;  // Boost.Context unwinding an abandoned fiber: let it through
      } catch (...) {
        if (!error_) error_ = std::current_exception();
      }
      thread_finished(t);
      return std::move(sinks_[t]);
    });
  }
}

uint32_t HostBlock::round(memcheck::Scope& scope) {
  uint32_t live = 0;
  for (uint32_t t = 0; t < fibers_.size() && !error_; ++t) {
    if (!fibers_[t]) continue;
    // whom a memory violation names, and whether it may touch global memory yet
    scope.set_thread(&threads_[t].thread_, &threads_[t].block_, &threads_[t].order_);
    fibers_[t] = std::move(fibers_[t]).resume();
    if (fibers_[t]) ++live;
  }
  return error_ ? 0 : live;
}

void HostBlock::finish(bool quiet) {
  if (!error_ && !quiet) {
    const std::string in_flight = unfinished_copies();
    if (!in_flight.empty()) {
      error_ = std::make_exception_ptr(
          std::logic_error("host executor: block " + dim_text(block_) + ": " + in_flight));
    }
  }
  fibers_.clear();  // unwinds any fiber still parked (after an error)
  sinks_.clear();
  if (error_ && !quiet) std::rethrow_exception(error_);
}

void HostBlock::wait_global(uint32_t thread, const uint32_t* counter, uint32_t target) {
  ++global_waiters_;
  for (uint32_t held; (held = __atomic_load_n(counter, __ATOMIC_ACQUIRE)) < target;) {
    global_wait_ = {thread, target, held, counter};
    yield(thread);
  }
  --global_waiters_;
  ++progress_;
}

std::string HostBlock::describe_global_wait(Dim3 block) const {
  const GlobalWait& w = global_wait_;
  return "block " + dim_text(block) + " thread " + std::to_string(w.thread) +
         " waits for the counter at " + memcheck::hex(reinterpret_cast<uintptr_t>(w.counter)) +
         " to reach " + std::to_string(w.target) + " (it holds " + std::to_string(w.held) + ")";
}

void HostBlock::wait_for(uint32_t thread, const uint64_t& generation) {
  const uint64_t seen = generation;
  while (generation == seen) yield(thread);
}

// A warp's or warpgroup's barrier (Warp, WarpGroup: live, arrived,
// generation): the last live member to arrive starts the next generation.
template <class Group>
void HostBlock::release_if_complete(Group& g) {
  if (g.arrived > 0 && g.arrived >= g.live) {
    g.arrived = 0;
    ++g.generation;
  }
}

template <class Group>
void HostBlock::arrive_and_wait(Group& g, uint32_t thread) {
  ++progress_;
  ++g.arrived;
  const uint64_t generation = g.generation;
  release_if_complete(g);
  if (g.generation == generation) wait_for(thread, g.generation);
}

void HostBlock::release_block_if_complete() {
  if (block_arrived_ > 0 && block_arrived_ >= block_live_) {
    block_arrived_ = 0;
    barrier_effects();
  }
}

void HostBlock::barrier_effects() {
  ++block_generation_;
  if (tracks_async_proxy_) async_proxy_.barrier();  // fenced writes are now visible to wgmma
  cp_async_.barrier();  // landed and handed-over copies, to every thread: no clocks needed
  tma_.barrier();       // TMA copies some thread saw land, to every thread
  race_.barrier();      // every access so far is ordered before every thread's next
  // A global store the barrier orders before every thread: a fence by the
  // thread that then makes an atomic covers it (the fence is cumulative).
  for (uint32_t t = 0; t < threads_.size(); ++t) {
    memcheck::ThreadOrder& o = threads_[t].order_;
    if (!o.unfenced_store) continue;
    barrier_ordered_ = {o.unfenced_store, o.unfenced_width, t + 1, block_generation_};
    o.unfenced_store = 0;
  }
}

void HostBlock::cluster_barrier(uint32_t thread) {
  ++progress_;
  const uint64_t generation = cluster_->generation;
  cluster_->arrive();
  if (cluster_->generation == generation) wait_for(thread, cluster_->generation);
}

void ClusterRun::arrive() {
  if (++arrived < threads) return;
  arrived = 0;
  ++generation;
  shadow.barrier();
  for (HostBlock* b : blocks) b->barrier_effects();
}

void HostBlock::warpgroup_barrier(uint32_t thread) {
  arrive_and_wait(groups_[thread / kWarpGroupSize], thread);
}

void HostBlock::warp_barrier(uint32_t thread) {
  arrive_and_wait(warps_[thread / kWarpSize], thread);
}

void HostBlock::block_barrier(uint32_t thread) {
  ++progress_;
  ++block_arrived_;
  const uint64_t generation = block_generation_;
  release_block_if_complete();
  if (block_generation_ == generation) wait_for(thread, block_generation_);
}

// A thread that has exited no longer counts towards barriers (as on Volta and
// later GPUs), so its exit may complete a barrier the others wait at.
void HostBlock::thread_finished(uint32_t thread) {
  ++progress_;
  WarpGroup& g = groups_[thread / kWarpGroupSize];
  if (g.issued_by[thread % kWarpGroupSize] > g.retired && !error_) {
    error_ = std::make_exception_ptr(std::logic_error(
        "host executor: thread " + std::to_string(thread) +
        " exits with a wgmma in flight (no wgmma_wait retired it; its results would be lost)"));
  }
  --g.live;
  release_if_complete(g);
  Warp& w = warps_[thread / kWarpSize];
  --w.live;
  release_if_complete(w);
  --block_live_;
  release_block_if_complete();
  if (cluster_ && block_live_ == 0) {
    const std::string dangling = cluster_->shadow.exited(rank_);
    if (!dangling.empty() && !error_) {
      error_ = std::make_exception_ptr(MemoryViolation("host executor: " + dangling));
    }
  }
}

HostBlock& HostCtx::collectives(const char* what) {
  if (!block_state_) {
    throw std::logic_error(std::string("host executor: ") + what +
                           " called by a kernel launched with uses_collectives = false");
  }
  return *block_state_;
}

HostBlock& HostCtx::whole_warpgroup(const char* what) {
  HostBlock& blk = collectives(what);
  if (blk.live_in_warpgroup(linear_thread_) != kWarpGroupSize) {
    throw std::logic_error(std::string("host executor: ") + what +
                           " needs all 128 threads of warpgroup " +
                           std::to_string(linear_thread_ / kWarpGroupSize));
  }
  return blk;
}

HostBlock& HostCtx::whole_warp(const char* what) {
  HostBlock& blk = collectives(what);
  if (blk.live_lanes(linear_thread_) != kWarpSize) {
    throw std::logic_error(std::string("host executor: ") + what + " needs all 32 lanes of warp " +
                           std::to_string(warp()));
  }
  return blk;
}

uint32_t HostCtx::shfl_idx(uint32_t v, int src_lane) {
  HostBlock& b = collectives("shfl_idx");
  const uint32_t src = static_cast<uint32_t>(src_lane) % kWarpSize;
  b.words(linear_thread_)[0] = v;
  b.warp_barrier(linear_thread_);
  if (src >= b.live_lanes(linear_thread_)) {
    throw std::logic_error("host executor: shuffle reads lane " + std::to_string(src) +
                           ", which is not an active lane of warp " + std::to_string(warp()));
  }
  const uint32_t out = b.words_of(linear_thread_, src)[0];
  b.warp_barrier(linear_thread_);  // nobody overwrites its word before all have read
  return out;
}

uint32_t HostCtx::shfl_xor(uint32_t v, int lane_mask) {
  return shfl_idx(v, static_cast<int>(lane() ^ static_cast<uint32_t>(lane_mask)));
}
float HostCtx::shfl_xor(float v, int lane_mask) {
  return bits_to_float(shfl_xor(float_to_bits(v), lane_mask));
}
float HostCtx::shfl_idx(float v, int src_lane) {
  return bits_to_float(shfl_idx(float_to_bits(v), src_lane));
}

void HostCtx::sync_threads() { collectives("sync_threads").block_barrier(linear_thread_); }

void HostCtx::cluster_sync() {
  HostBlock& b = collectives("cluster_sync");
  if (b.cluster()) {
    b.cluster_barrier(linear_thread_);
  } else {
    b.block_barrier(linear_thread_);  // a cluster of one: its barrier is the block's
  }
}

void* HostCtx::map_shared(const void* p, uint32_t rank) const {
  const auto at = reinterpret_cast<uintptr_t>(p), base = reinterpret_cast<uintptr_t>(shared_);
  const ClusterRun* cluster = block_state_ ? block_state_->cluster() : nullptr;
  const uint32_t blocks = cluster ? static_cast<uint32_t>(cluster->blocks.size()) : 1;
  const std::size_t bytes = block_state_ ? block_state_->shared_bytes() : 0;
  if (at < base || at >= base + bytes) {
    throw std::logic_error("host executor: thread " + std::to_string(linear_thread_) +
                           ": map_shared_rank of " + memcheck::hex(at) +
                           ", which is not in the block's shared memory");
  }
  if (rank >= blocks) {
    throw std::logic_error("host executor: thread " + std::to_string(linear_thread_) +
                           ": map_shared_rank to rank " + std::to_string(rank) +
                           " of a cluster of " + std::to_string(blocks) + " blocks");
  }
  if (!cluster) return const_cast<void*>(p);
  return const_cast<unsigned char*>(cluster->blocks[rank]->shared()) + (at - base);
}
void HostCtx::sync_warp() {
  HostBlock& b = collectives("sync_warp");
  b.warp_barrier(linear_thread_);
  b.warp_synced(linear_thread_);
}

// Fragment owners of mma.m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16"):
// groupID = lane / 4, threadID_in_group = lane % 4. A[row][k] sits in lane
// (row % 8) * 4 + (k % 8) / 2, register (row >= 8) + 2 (k >= 8), half k % 2;
// B[k][col] in lane col * 4 + (k % 8) / 2, register 4 + (k >= 8), half k % 2.
const MmaOperands& HostBlock::mma_operands(uint32_t thread, HalfKind kind) {
  Warp& w = warps_[thread / kWarpSize];
  MmaOperands& m = w.mma;
  if (m.generation == w.generation) return m;
  const auto half = [&](uint32_t owner, int reg, int k) {
    return half_bits_to_float(static_cast<uint16_t>(w.words[owner][reg] >> (16 * (k % 2))), kind);
  };
  for (int row = 0; row < 16; ++row) {
    for (int k = 0; k < 16; ++k) {
      m.a[row][k] = half(static_cast<uint32_t>((row % 8) * 4 + (k % 8) / 2),
                         (row >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0), k);
    }
  }
  for (int k = 0; k < 16; ++k) {
    for (int col = 0; col < 8; ++col) {
      m.b[k][col] = half(static_cast<uint32_t>(col * 4 + (k % 8) / 2), 4 + (k >= 8 ? 1 : 0), k);
    }
  }
  m.generation = w.generation;
  return m;
}

void HostCtx::mma_m16n8k16(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4],
                           HalfKind kind) {
  HostBlock& blk = whole_warp("mma_m16n8k16");
  uint32_t* mine = blk.words(linear_thread_);
  for (int i = 0; i < 4; ++i) mine[i] = a[i];
  mine[4] = b[0];
  mine[5] = b[1];
  blk.warp_barrier(linear_thread_);
  // Every lane has deposited: the operands of this mma (the barrier's new
  // generation names it), decoded by whichever lane gets here first.
  const MmaOperands& op = blk.mma_operands(linear_thread_, kind);
  const int group = static_cast<int>(lane() / 4), pair = static_cast<int>(lane() % 4);
  float out[4];
  for (int i = 0; i < 4; ++i) {
    const int row = group + (i >= 2 ? 8 : 0), col = 2 * pair + (i % 2);
    float acc = c[i];
    for (int k = 0; k < 16; ++k) acc = fma_rn(op.a[row][k], op.b[k][col], acc);
    out[i] = acc;
  }
  blk.warp_barrier(linear_thread_);  // nobody deposits the next operands before all have read
  for (int i = 0; i < 4; ++i) d[i] = out[i];
}

const HostCtx* HostBlock::unfenced_thread() const {
  for (const HostCtx& c : threads_) {
    if (c.order_.unfenced_store) return &c;
  }
  return nullptr;
}

const HostCtx* HostBlock::unfenced_for(const HostCtx& atomic) const {
  if (const HostCtx* c = unfenced_thread()) return c;
  if (barrier_ordered_.thread_plus_1 && atomic.fenced_after_ <= barrier_ordered_.generation) {
    return &threads_[barrier_ordered_.thread_plus_1 - 1];
  }
  return nullptr;
}

uint32_t HostCtx::atomic_inc_global(uint32_t* counter, uint32_t wrap_at) {
  memcheck::check_access(counter, 4, memcheck::Op::atomic, memcheck::Space::global);
  // Without collectives the threads of a block run one after another, so
  // only this thread's own stores can be judged.
  const HostCtx* unfenced = block_state_            ? block_state_->unfenced_for(*this)
                            : order_.unfenced_store ? this
                                                    : nullptr;
  if (unfenced && memcheck::t_current) {
    memcheck::ThreadOrder store = unfenced->order_;
    if (!store.unfenced_store) {  // ordered before this thread by a block barrier, not fenced since
      store.unfenced_store = block_state_->barrier_ordered().address;
      store.unfenced_width = block_state_->barrier_ordered().width;
    }
    memcheck::t_current->fail_unfenced_store(reinterpret_cast<uintptr_t>(counter),
                                             unfenced->thread_, store);
  }
  if (order_.block_atomic_unfenced) {
    *order_.block_atomic_unfenced = reinterpret_cast<uintptr_t>(counter);
  }
  // atom.inc as a compare-and-swap loop (the builtins have no wrapping increment).
  uint32_t old = __atomic_load_n(counter, __ATOMIC_SEQ_CST);
  while (!__atomic_compare_exchange_n(counter, &old, old >= wrap_at ? 0u : old + 1u, false,
                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  if (block_state_ && block_state_->co_resident()) block_state_->grid()->changed();
  return old;
}

void HostCtx::wait_global_at_least(const uint32_t* counter, uint32_t target) {
  memcheck::check_access(counter, 4, memcheck::Op::atomic, memcheck::Space::global);
  if (!block_state_ || !block_state_->co_resident()) {
    throw std::logic_error(
        "host executor: wait_global_at_least in a launch without LaunchShape::co_resident: on "
        "the GPU the block it waits for may never run while this one holds its multiprocessor");
  }
  block_state_->wait_global(linear_thread_, counter, target);
  // What the blocks it waited for wrote is read after a fence, as after an atomic.
  if (order_.block_atomic_unfenced) {
    *order_.block_atomic_unfenced = reinterpret_cast<uintptr_t>(counter);
  }
}

void HostCtx::fence_global() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (block_state_) fenced_after_ = block_state_->generation() + 1;
  order_.unfenced_store = 0;
  if (order_.block_atomic_unfenced) *order_.block_atomic_unfenced = 0;
}

void HostCtx::ldmatrix_x4(uint32_t out[4], const void* shared_row, bool transpose) {
  HostBlock& blk = whole_warp("ldmatrix_x4");
  memcheck::check_access(shared_row, 16, memcheck::Op::load, memcheck::Space::shared);
  const auto address = reinterpret_cast<uintptr_t>(shared_row);
  uint32_t* mine = blk.words(linear_thread_);
  mine[0] = static_cast<uint32_t>(address);
  mine[1] = static_cast<uint32_t>(uint64_t{address} >> 32);
  blk.warp_barrier(linear_thread_);
  // Element (row, column) of matrix i: the 16-bit value at column `column`
  // of the row that lane 8 i + row named.
  const auto element = [&](int i, uint32_t row, uint32_t column) {
    const uint32_t* named = blk.words_of(linear_thread_, 8 * static_cast<uint32_t>(i) + row);
    const uintptr_t at = uintptr_t{named[0]} | (uintptr_t{named[1]} << 32);
    uint16_t v;
    std::memcpy(&v, reinterpret_cast<const unsigned char*>(at) + 2 * column, sizeof v);
    return uint32_t{v};
  };
  const uint32_t l = lane();
  uint32_t got[4];
  for (int i = 0; i < 4; ++i) {
    got[i] = transpose ? element(i, 2 * (l % 4), l / 4) | element(i, 2 * (l % 4) + 1, l / 4) << 16
                       : element(i, l / 4, 2 * (l % 4)) | element(i, l / 4, 2 * (l % 4) + 1) << 16;
  }
  blk.warp_barrier(linear_thread_);  // nobody deposits the next addresses before all have read
  for (int i = 0; i < 4; ++i) out[i] = got[i];
}

void HostCtx::wgmma(float* acc, const uint32_t a[4], const void* b_tile, int n, HalfKind kind) {
  HostBlock& blk = whole_warpgroup("wgmma_m64k16");
  if (!wgmma_fenced_) {
    throw std::logic_error(
        "host executor: thread " + std::to_string(linear_thread_) +
        ": wgmma_m64k16 without a wgmma_fence since its last wgmma_commit "
        "(wgmma.fence orders the registers' writes before the wgmma reads them)");
  }
  WgmmaIssue::Lane lane;
  lane.acc = acc;
  lane.a_regs = a;
  std::memcpy(lane.a, a, sizeof lane.a);
  lane.acc_at_issue.assign(acc, acc + n / 2);
  blk.wgmma_issue(linear_thread_, lane, static_cast<const unsigned char*>(b_tile), n, kind,
                  shared_);
}

void HostCtx::wgmma_commit() {
  collectives("wgmma_commit").wgmma_commit(linear_thread_);
  wgmma_fenced_ = false;
}

void HostCtx::wgmma_wait(int pending) {
  whole_warpgroup("wgmma_wait").wgmma_wait(linear_thread_, pending);
}

// The block and shared offset of an mbarrier, checked as the instruction's
// 8-byte shared-memory operand.
HostCtx::MbarrierAt HostCtx::mbarrier_of(const uint64_t* bar, const char* what) {
  HostBlock& b = collectives(what);
  const auto at = reinterpret_cast<uintptr_t>(bar), base = reinterpret_cast<uintptr_t>(shared_);
  if (at < base || at + 8 > base + b.shared_bytes() || at % 8 != 0) {
    throw std::logic_error(std::string("host executor: ") + what +
                           ": the mbarrier is not an 8-byte aligned word of the block's shared "
                           "memory (address " +
                           std::to_string(at) + ")");
  }
  return {b, at - base};
}

void HostCtx::mbarrier_init(uint64_t* bar, uint32_t count) {
  const MbarrierAt m = mbarrier_of(bar, "mbarrier_init");
  m.block.mbarrier_init(linear_thread_, m.offset, count);
}
void HostCtx::mbarrier_arrive(uint64_t* bar) {
  const MbarrierAt m = mbarrier_of(bar, "mbarrier_arrive");
  m.block.mbarrier_arrive(linear_thread_, m.offset);
}
void HostCtx::mbarrier_wait(uint64_t* bar, uint32_t parity) {
  const MbarrierAt m = mbarrier_of(bar, "mbarrier_wait");
  m.block.mbarrier_wait(linear_thread_, m.offset, parity);
}
void HostCtx::mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  const MbarrierAt m = mbarrier_of(bar, "mbarrier_arrive_expect_tx");
  if (bytes >= (1u << 20)) {
    throw std::logic_error("host executor: mbarrier_arrive_expect_tx at shared offset " +
                           std::to_string(m.offset) + " of " + std::to_string(bytes) +
                           " bytes (a phase's transaction count is below 2^20)");
  }
  m.block.mbarrier_arrive(linear_thread_, m.offset, bytes);
}

void HostCtx::tma_load_2d(void* shared_dst, const TensorMap2d& map, int32_t col, int32_t row,
                          uint64_t* bar) {
  const MbarrierAt m = mbarrier_of(bar, "tma_load_2d");
  const auto dst = reinterpret_cast<uintptr_t>(shared_dst);
  const auto base = reinterpret_cast<uintptr_t>(shared_);
  const uintptr_t align = tma_box_alignment(map.swizzle);
  const uint32_t row_bytes = map.box_row_bytes(), bytes = map.box_bytes();
  if (dst < base || dst + bytes > base + m.block.shared_bytes() || dst % align != 0) {
    throw MemoryViolation("host executor: thread " + std::to_string(linear_thread_) +
                          ": tma_load_2d of a " + std::to_string(bytes) + "-byte box to address " +
                          std::to_string(dst) + ", which is not a " + std::to_string(align) +
                          "-byte aligned range of the block's shared memory (" +
                          (align == 128 ? "the TMA's 128 bytes" : "the swizzle's atom") + ")");
  }
  if ((int64_t{col} * map.elem_bytes) % 16 != 0) {
    // Held conservatively: on the H200 (2026-12-03) harness/tma_test.cc
    // raised cudaErrorIllegalInstruction with three new boxes, one of them
    // at column 3 of 2-byte elements, the only one ever tried whose rows
    // start off 16 bytes; every box that ran did (negative and past the
    // matrix included). Not yet run alone on the GPU.
    throw MemoryViolation("host executor: thread " + std::to_string(linear_thread_) +
                          ": tma_load_2d at column " + std::to_string(col) + " of " +
                          std::to_string(map.elem_bytes) + "-byte elements: the box starts " +
                          std::to_string(int64_t{col} * map.elem_bytes) +
                          " bytes into its rows, not a multiple of 16");
  }
  // Chunk by chunk (16 bytes), each to where the map's swizzle puts it: a
  // chunk wholly in the matrix and 16-byte aligned in one checked read, any
  // other element by element (each in the matrix a checked read, each past
  // it zero).
  const uint32_t eb = map.elem_bytes, per_chunk = 16 / eb;
  const auto* matrix = static_cast<const unsigned char*>(map.base);
  const auto in_matrix = [&map](int64_t r, int64_t c) {
    return r >= 0 && r < static_cast<int64_t>(map.rows) && c >= 0 &&
           c < static_cast<int64_t>(map.cols);
  };
  const auto element = [&](int64_t r, int64_t c) {
    return matrix + static_cast<uint64_t>(r) * map.row_bytes + static_cast<uint64_t>(c) * eb;
  };
  for (uint32_t r = 0; r < map.box_rows; ++r) {
    const int64_t gr = int64_t{row} + r;
    for (uint32_t chunk = 0; chunk < row_bytes / 16; ++chunk) {
      auto* out = reinterpret_cast<unsigned char*>(
          tma_swizzled(dst + uintptr_t{r} * row_bytes + 16 * chunk, map.swizzle));
      const int64_t gc = int64_t{col} + int64_t{chunk} * per_chunk;
      if (in_matrix(gr, gc) && in_matrix(gr, gc + per_chunk - 1) &&
          reinterpret_cast<uintptr_t>(element(gr, gc)) % 16 == 0) {
        memcheck::check_access(element(gr, gc), 16, memcheck::Op::cp_async_read,
                               memcheck::Space::global);
        std::memcpy(out, element(gr, gc), 16);
        continue;
      }
      for (uint32_t e = 0; e < per_chunk; ++e) {
        if (!in_matrix(gr, gc + e)) {
          std::memset(out + e * eb, 0, eb);
          continue;
        }
        memcheck::check_access(element(gr, gc + e), eb, memcheck::Op::cp_async_read,
                               memcheck::Space::global);
        std::memcpy(out + e * eb, element(gr, gc + e), eb);
      }
    }
  }
  m.block.tma_copied(linear_thread_, m.offset, dst - base, bytes);
}

void HostCtx::cp_async_mbarrier_arrive(uint64_t* bar) {
  const MbarrierAt m = mbarrier_of(bar, "cp_async_mbarrier_arrive");
  if (order_.cp_async) order_.cp_async->landed_all(linear_thread_);
  m.block.mbarrier_arrive(linear_thread_, m.offset);
}

void HostBlock::mbarrier_init(uint32_t thread, std::size_t offset, uint32_t count) {
  if (count == 0 || count >= (1u << 20)) {
    throw std::logic_error("host executor: mbarrier_init at shared offset " +
                           std::to_string(offset) + " with count " + std::to_string(count) +
                           " (an mbarrier takes 1 to 2^20 - 1 arrivals a phase)");
  }
  MBarrier& m = mbarriers_[offset];
  m = MBarrier{};
  m.count = m.pending = count;
  m.init_thread = thread;
  m.init_generation = block_generation_;
  m.arrived.assign(threads_.size(), false);
  clocks_.start();
  ++progress_;
}

HostBlock::MBarrier& HostBlock::mbarrier_at(uint32_t thread, std::size_t offset, const char* what) {
  const auto it = mbarriers_.find(offset);
  if (it == mbarriers_.end()) {
    throw std::logic_error(std::string("host executor: ") + what + " by thread " +
                           std::to_string(thread) + " on the mbarrier at shared offset " +
                           std::to_string(offset) + ", which no mbarrier_init has set up");
  }
  MBarrier& m = it->second;
  if (m.init_thread != thread && m.init_generation == block_generation_) {
    throw std::logic_error(std::string("host executor: ") + what + " by thread " +
                           std::to_string(thread) + " on the mbarrier at shared offset " +
                           std::to_string(offset) + " with no block barrier since thread " +
                           std::to_string(m.init_thread) +
                           " initialized it (the init may not be visible yet)");
  }
  return m;
}

void HostBlock::mbarrier_arrive(uint32_t thread, std::size_t offset, uint32_t expect_tx) {
  MBarrier& m = mbarrier_at(thread, offset, "mbarrier_arrive");
  ++progress_;
  if (m.pending == 0) {
    throw std::logic_error("host executor: thread " + std::to_string(thread) +
                           " arrives on the mbarrier at shared offset " + std::to_string(offset) +
                           " whose phase has all its " + std::to_string(m.count) +
                           " arrivals and waits for TMA bytes only (one arrival too many)");
  }
  m.arrived[thread] = true;
  m.tx += expect_tx;
  clocks_.release(thread, m.releasing);
  --m.pending;
  complete_if_done(m, offset);
}

void HostBlock::tma_copied(uint32_t thread, std::size_t offset, std::size_t dst, uint32_t bytes) {
  MBarrier& m = mbarrier_at(thread, offset, "tma_load_2d");
  ++progress_;
  std::string hazard = race_.copied_over(dst, bytes, thread);
  if (hazard.empty()) hazard = tma_.issued(thread, dst, bytes, offset, m.tma_granules);
  if (hazard.empty() && cluster_) hazard = cluster_->shadow.written(rank_, dst, bytes);
  if (!hazard.empty()) {
    throw MemoryViolation("host executor: thread " + std::to_string(thread) + ": " + hazard);
  }
  m.tx -= bytes;
  complete_if_done(m, offset);
}

void HostBlock::complete_if_done(MBarrier& m, std::size_t offset) {
  if (m.pending > 0) return;
  if (m.tx < 0) {
    throw std::logic_error(
        "host executor: the mbarrier at shared offset " + std::to_string(offset) +
        " has every arrival of its phase, and its TMA copies brought " + std::to_string(-m.tx) +
        " bytes more than the phase's expect_tx: on the GPU the phase may complete before "
        "they land (expect_tx too small)");
  }
  if (m.tx > 0) return;  // every arrival is in; the phase waits for TMA bytes
  // The phase completes: what its arriving threads published is handed
  // over to the threads that wait on it (their clocks acquire the phase's).
  cp_async_.released_by(m.arrived);
  if (tracks_async_proxy_) async_proxy_.released_by(m.arrived);
  m.arrived.assign(m.arrived.size(), false);
  m.pending = m.count;
  if (!m.tma_granules.empty()) {  // its TMA copies landed, visible after the phase
    if (m.tma_source == 0) m.tma_source = clocks_.add_source();
    tma_.landed(m.tma_granules, m.tma_source, clocks_.release_source(m.tma_source, m.releasing));
    m.tma_granules.clear();
  }
  m.completed[m.completions % 2] = std::move(m.releasing);
  m.releasing.clear();
  ++m.completions;
}

std::string HostBlock::unfinished_copies() const {
  for (const auto& [offset, m] : mbarriers_) {
    if (!m.tma_granules.empty()) {
      return "it ends with TMA copies in flight on the mbarrier at shared offset " +
             std::to_string(offset) + " (no thread waited for the phase that counts them)";
    }
  }
  return "";
}

std::string HostBlock::pending_transactions() const {
  std::string text;
  for (const auto& [offset, m] : mbarriers_) {
    if (m.pending == 0 && m.tx > 0) {
      text += "; the mbarrier at shared offset " + std::to_string(offset) + " has every arrival " +
              "of its phase and waits for " + std::to_string(m.tx) +
              " bytes that no TMA copy brings (expect_tx too large?)";
    }
  }
  return text;
}

void HostBlock::mbarrier_wait(uint32_t thread, std::size_t offset, uint32_t parity) {
  // The phase of parity `parity` has completed once the current phase's
  // parity differs (try_wait.parity).
  const MBarrier& m = mbarrier_at(thread, offset, "mbarrier_wait");  // map nodes stay put
  while ((m.completions & 1u) == (parity & 1u)) yield(thread);
  clocks_.acquire(thread, m.completed[(m.completions - 1) % 2]);  // the phase it saw
}

void HostCtx::fence_proxy_async() {
  if (order_.async_proxy) order_.async_proxy->fenced(linear_thread_);
}

void HostBlock::wgmma_issue(uint32_t thread, const WgmmaIssue::Lane& lane, const unsigned char* b,
                            int n, HalfKind kind, const unsigned char* shared) {
  WarpGroup& g = groups_[thread / kWarpGroupSize];
  const uint32_t me = thread % kWarpGroupSize;
  g.staged[me] = lane;
  const std::size_t index = g.issued_by[me]++;
  warpgroup_barrier(thread);      // .sync.aligned: the warpgroup issues it together
  if (index < g.issues.size()) {  // another thread recorded it; it must be the same wgmma
    const WgmmaIssue& w = g.issues[index];
    if (w.b != b || w.n != n || w.kind != kind) {
      throw std::logic_error(
          "host executor: the threads of warpgroup " + std::to_string(thread / kWarpGroupSize) +
          " issued different wgmmas (" + std::to_string(index) + " of the block's)");
    }
    return;
  }
  const uintptr_t at = reinterpret_cast<uintptr_t>(b);
  if ((at & 31u) != 0 || (at & 1023u) >= 128) {
    throw MemoryViolation("host executor: thread " + std::to_string(thread) +
                          ": wgmma B tile at shared offset " + std::to_string(b - shared) +
                          " is not a 1024-byte-aligned tile plus a multiple of 32 bytes below 128 "
                          "(the 128-byte swizzle's atom)");
  }
  WgmmaIssue w;
  w.b = b;
  w.n = n;
  w.kind = kind;
  w.b_at_issue.resize(std::size_t(16) * n);
  for (int col = 0; col < n; ++col) {
    for (int k = 0; k < 16; k += 8) {  // one 16-byte chunk of the row at a time
      const unsigned char* chunk = wgmma_b_element(b, k, col);
      if (!tma_.quiet()) {  // before check_access, whose message would name one thread's load
        const std::string hazard =
            tma_.group_hazard(std::size_t(chunk - shared), 16, thread - me, kWarpGroupSize);
        if (!hazard.empty()) {
          throw MemoryViolation("host executor: thread " + std::to_string(thread) + ": " + hazard);
        }
      }
      memcheck::check_access(chunk, 16, memcheck::Op::wgmma_read, memcheck::Space::shared);
      if (tracks_async_proxy_) {
        const auto p =
            async_proxy_.pending_for(std::size_t(chunk - shared), 16, thread - me, kWarpGroupSize);
        if (p.writer_plus_1) {
          throw MemoryViolation(
              "host executor: thread " + std::to_string(thread) + ": wgmma reads shared offset " +
              std::to_string(p.offset) + ", written by thread " +
              std::to_string(p.writer_plus_1 - 1) +
              (p.fenced ? " and fenced, but with no barrier since the fence (thread " +
                              std::to_string(p.fencer) + "'s; thread " + std::to_string(p.reader) +
                              " of the warpgroup is not ordered after it by an mbarrier phase "
                              "or a sync_warp either)"
               : p.released ? std::string(" and handed over by an mbarrier phase, but with no "
                                          "fence_proxy_async since by a thread ordered after "
                                          "the phase")
                            : std::string(" without a fence_proxy_async since")) +
              ": the async proxy may not see that write yet");
        }
      }
      for (int i = 0; i < 8; ++i)
        std::memcpy(&w.b_at_issue[std::size_t(k + i) * n + col], chunk + 2 * i, 2);
    }
  }
  for (uint32_t t = 0; t < kWarpGroupSize; ++t) w.lanes[t] = std::move(g.staged[t]);
  g.issues.push_back(std::move(w));
}

void HostBlock::wgmma_commit(uint32_t thread) {
  WarpGroup& g = groups_[thread / kWarpGroupSize];
  const uint32_t me = thread % kWarpGroupSize;
  g.group_ends[me].push_back(g.issued_by[me]);
}

void HostBlock::wgmma_wait(uint32_t thread, int pending) {
  WarpGroup& g = groups_[thread / kWarpGroupSize];
  const uint32_t me = thread % kWarpGroupSize;
  warpgroup_barrier(thread);  // .sync.aligned
  const std::vector<std::size_t>& ends = g.group_ends[me];
  if (ends.size() != g.group_ends[0].size()) {
    throw std::logic_error("host executor: the threads of warpgroup " +
                           std::to_string(thread / kWarpGroupSize) +
                           " committed different numbers of wgmma groups before a wgmma_wait");
  }
  if (ends.size() > static_cast<std::size_t>(pending)) {
    retire(g, ends[ends.size() - 1 - static_cast<std::size_t>(pending)], thread);
  }
}

// Computes the wgmmas [g.retired, end), oldest first, after checking that
// nothing they read changed while they were in flight.
void HostBlock::retire(WarpGroup& g, std::size_t end, uint32_t thread) {
  const std::string group = "warpgroup " + std::to_string(thread / kWarpGroupSize);
  // The B tiles it read, for the copies and stores that come later
  // (TmaShadow): read until now, with the warpgroup's threads at their
  // epochs in this wait (epochs 1 with the clocks off: then only a block
  // barrier orders another thread after the read).
  uint32_t snapshot = 0;
  const uint32_t first = thread - thread % kWarpGroupSize;
  const bool records = g.retired < end;
  if (records) {
    std::vector<uint32_t> epochs(kWarpGroupSize);
    for (uint32_t t = 0; t < kWarpGroupSize; ++t) epochs[t] = clocks_.epoch(first + t);
    snapshot = tma_.group_snapshot(std::move(epochs));
  }
  for (; g.retired < end; ++g.retired) {
    WgmmaIssue& w = g.issues[g.retired];
    const std::string which = "wgmma " + std::to_string(g.retired) + " of " + group;
    float a[64][16];
    for (uint32_t t = 0; t < kWarpGroupSize; ++t) {
      WgmmaIssue::Lane& l = w.lanes[t];
      if (std::memcmp(l.a_regs, l.a, sizeof l.a) != 0) {
        throw std::logic_error("host executor: " + which + ": thread " + std::to_string(t) +
                               " changed its A registers before the wgmma_wait that retires it");
      }
      if (std::memcmp(l.acc, l.acc_at_issue.data(), l.acc_at_issue.size() * sizeof(float))) {
        throw std::logic_error("host executor: " + which + ": thread " + std::to_string(t) +
                               " wrote its accumulators while the wgmma was in flight");
      }
      // A fragments (mma_m16n8k16's layout, warp t / 32 holding rows 16 (t / 32) ..)
      const int warp = static_cast<int>(t / kWarpSize), gid = static_cast<int>(t % kWarpSize) / 4,
                tig = static_cast<int>(t % 4);
      for (int r = 0; r < 4; ++r) {
        const int row = 16 * warp + gid + (r % 2) * 8, k = 2 * tig + (r / 2) * 8;
        a[row][k] = half_bits_to_float(static_cast<uint16_t>(l.a[r]), w.kind);
        a[row][k + 1] = half_bits_to_float(static_cast<uint16_t>(l.a[r] >> 16), w.kind);
      }
    }
    if (records) {
      const unsigned char* shared = threads_[0].shared_;
      for (int col = 0; col < w.n; ++col) {
        for (int k = 0; k < 16; k += 8) {
          tma_.group_read_by(std::size_t(wgmma_b_element(w.b, k, col) - shared), 16, first,
                             snapshot);
        }
      }
    }
    std::vector<float> b(std::size_t(16) * w.n);
    for (int col = 0; col < w.n; ++col) {
      for (int k = 0; k < 16; ++k) {
        uint16_t v;
        std::memcpy(&v, wgmma_b_element(w.b, k, col), 2);
        if (v != w.b_at_issue[std::size_t(k) * w.n + col]) {
          throw MemoryViolation("host executor: " + which + ": the shared memory it reads (B[" +
                                std::to_string(k) + "][" + std::to_string(col) +
                                "]) was written before the wgmma_wait that retires it");
        }
        b[std::size_t(k) * w.n + col] = half_bits_to_float(v, w.kind);
      }
    }
    for (uint32_t t = 0; t < kWarpGroupSize; ++t) {
      float* acc = w.lanes[t].acc;
      const int warp = static_cast<int>(t / kWarpSize), gid = static_cast<int>(t % kWarpSize) / 4,
                tig = static_cast<int>(t % 4);
      for (int i = 0; i < w.n / 2; ++i) {
        const int row = 16 * warp + gid + ((i % 4) >= 2 ? 8 : 0),
                  col = 8 * (i / 4) + 2 * tig + i % 2;
        float sum = acc[i];
        for (int k = 0; k < 16; ++k) sum = fma_rn(a[row][k], b[std::size_t(k) * w.n + col], sum);
        acc[i] = sum;
      }
      // The wgmmas issued after this one into the same accumulators expect
      // this result there, not what was there at their issue.
      for (std::size_t later = g.retired + 1; later < g.issues.size(); ++later) {
        WgmmaIssue::Lane& l = g.issues[later].lanes[t];
        if (l.acc == acc) l.acc_at_issue.assign(acc, acc + w.n / 2);
      }
    }
    w.b_at_issue = {};
    for (auto& l : w.lanes) l.acc_at_issue = {};
  }
}

// Cluster `index` of a clustered launch (in the grid of clusters, x
// fastest): its blocks, rank by rank (x fastest within the cluster), each
// with its shared memory from `shared` and its state from `states`, take
// turns on this worker thread, a round of each block's live threads after
// another's, until every thread has exited or one failed. A round in which
// no block got anywhere is a deadlock. Rethrows the first failure.
void run_cluster(const LaunchShape& shape, uint64_t index,
                 std::vector<std::unique_ptr<HostBlock>>& states,
                 const std::vector<unsigned char*>& shared, const HostThreadBody& body,
                 memcheck::Scope& scope) {
  const Dim3 c = shape.cluster;
  const Dim3 at =
      unflatten(index, Dim3{shape.grid.x / c.x, shape.grid.y / c.y, shape.grid.z / c.z});
  const auto size = static_cast<uint32_t>(states.size());
  std::vector<Dim3> blocks(size);
  ClusterRun run;
  for (uint32_t r = 0; r < size; ++r) {
    const Dim3 local = unflatten(r, c);
    blocks[r] = Dim3{at.x * c.x + local.x, at.y * c.y + local.y, at.z * c.z + local.z};
    run.blocks.push_back(states[r].get());
  }
  run.shadow.reset(blocks, shape.shared_bytes);
  run.threads = size * threads_per_block(shape);
  for (uint32_t r = 0; r < size; ++r) {
    std::fill_n(shared[r], shape.shared_bytes, 0xCD);  // shared memory starts undefined
    run.shadow.place(r, shared[r]);
    states[r]->start(shape, blocks[r], shared[r], body, nullptr, &run, r);
  }
  const auto progress = [&] {
    uint64_t sum = 0;
    for (const auto& b : states) sum += b->progress();
    return sum;
  };
  int failed = -1;
  for (uint32_t live = run.threads; live > 0 && failed < 0;) {
    const uint64_t before = progress();
    live = 0;
    for (uint32_t r = 0; r < size && failed < 0; ++r) {
      if (states[r]->live_threads() == 0) continue;
      scope.set_shared(shared[r], shape.shared_bytes);
      scope.set_cluster(&run.shadow, r);
      live += states[r]->round(scope);
      if (states[r]->failed()) failed = static_cast<int>(r);
    }
    if (failed < 0 && progress() == before) {  // an exit is progress too
      states[0]->fail(std::make_exception_ptr(std::runtime_error(
          "host executor: the cluster of blocks " + dim_text(blocks.front()) + " to " +
          dim_text(blocks.back()) + ": " + std::to_string(live) +
          " threads wait at a barrier or collective that can never complete (" +
          std::to_string(run.arrived) + " of the cluster's " + std::to_string(run.threads) +
          " threads wait at cluster_sync, which waits for every one of them; an exited thread "
          "never arrives)")));
      failed = 0;
    }
  }
  scope.set_cluster(nullptr, 0);
  // Every block's fibers unwound; the failed block's error, or the first
  // block's that may not end as it did.
  for (uint32_t r = 0; r < size; ++r) {
    if (failed >= 0 && static_cast<uint32_t>(failed) != r) states[r]->finish(true);
  }
  if (failed >= 0) states[static_cast<uint32_t>(failed)]->finish();
  for (uint32_t r = 0; failed < 0 && r < size; ++r) states[r]->finish();
}

void run_block_plain(const LaunchShape& shape, Dim3 block, unsigned char* shared,
                     const HostThreadBody& body, memcheck::Scope& scope) {
  HostCtx c;
  c.block_ = block;
  c.block_dim_ = shape.block;
  c.grid_dim_ = shape.grid;
  c.shared_ = shared;
  uintptr_t atomic_unfenced = 0;                       // the block's, as HostBlock keeps it
  bool triggered_dependents = false;                   // the same
  scope.set_thread(&c.thread_, &c.block_, &c.order_);  // c is each thread in turn
  const uint32_t n = threads_per_block(shape);
  // Without collectives nothing orders two threads: any shared byte one
  // writes and another touches is a race (the clocks stay off).
  static thread_local memcheck::ReleaseClocks no_clocks;
  static thread_local memcheck::SharedRaceShadow race;
  no_clocks.reset(n);
  race.reset(shape.shared_bytes, n, no_clocks);
  for (uint32_t t = 0; t < n; ++t) {
    c.thread_ = unflatten(t, shape.block);
    c.linear_thread_ = t;
    c.order_ = memcheck::ThreadOrder{};
    c.order_.awaiting_prior_grid = shape.overlaps_prior_grid;
    c.order_.block_atomic_unfenced = &atomic_unfenced;
    c.order_.block_triggered_dependents = &triggered_dependents;
    c.order_.linear_thread = t;
    c.order_.race = &race;
    body(c);
    if (shape.independent_of_prior_grid && c.order_.awaiting_prior_grid) {
      scope.fail_exit_before_wait();
    }
  }
}

unsigned host_executor_threads() {
  if (const char* env = std::getenv("NVFP4_HOST_THREADS")) {
    const long v = std::strtol(env, nullptr, 10);
    if (v >= 1 && v <= 1024) return static_cast<unsigned>(v);
    throw std::invalid_argument(std::string("NVFP4_HOST_THREADS = ") + env +
                                ": must be a whole number from 1 to 1024");
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::string demangled_name(const std::type_info& type) {
  return boost::core::demangle(type.name());
}

uint32_t host_co_resident_blocks() { return g_co_resident_blocks.load(); }
void set_host_co_resident_blocks(uint32_t blocks) { g_co_resident_blocks.store(blocks); }

HostGridLog::HostGridLog() {
  HostGridLog* none = nullptr;
  if (!g_grid_log.compare_exchange_strong(none, this))
    throw std::logic_error("HostGridLog: another log is alive; one at a time");
}
HostGridLog::~HostGridLog() { g_grid_log.store(nullptr); }
std::vector<HostGrid> HostGridLog::grids() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return grids_;
}
void HostGridLog::record(HostGrid grid) {
  std::lock_guard<std::mutex> lock(mutex_);
  grids_.push_back(std::move(grid));
}

HostAccessLog::HostAccessLog() {
  memcheck::AccessCounts* none = nullptr;
  if (!memcheck::g_access_counts.compare_exchange_strong(none, &counts_))
    throw std::logic_error("HostAccessLog: another log is alive; one at a time");
}
HostAccessLog::~HostAccessLog() { memcheck::g_access_counts.store(nullptr); }
uint64_t HostAccessLog::global(memcheck::Op op, uint32_t width) const {
  const int w = memcheck::AccessCounts::width_index(width);
  return w < 0 ? 0 : counts_.n[static_cast<int>(op)][w].load();
}

void run_grid_on_host(const LaunchShape& shape, const HostThreadBody& body, const char* kernel) {
  validate_shape(shape);
  if (HostGridLog* log = g_grid_log.load()) log->record({kernel, shape.grid, shape.cluster});
  // One snapshot for the whole launch: kernels do not allocate.
  const std::shared_ptr<const memcheck::Regions> allocations = memcheck::registered_allocations();
  // The grid before's footprint, where this launch may use it; this one's,
  // where the launch after may (both null otherwise).
  std::shared_ptr<const memcheck::GridFootprint> prior;
  {
    std::lock_guard<std::mutex> lock(g_footprint_mutex);
    if (shape.independent_of_prior_grid) prior = g_last_footprint;
    g_last_footprint = nullptr;
  }
  const auto footprint = shape.lets_dependents_overlap
                             ? std::make_shared<memcheck::GridFootprint>(allocations)
                             : nullptr;
  const uint64_t blocks = total_blocks(shape);
  // What a worker takes at a time: a block, or a cluster's blocks together.
  const uint32_t per_unit = is_clustered(shape) ? blocks_per_cluster(shape) : 1;
  const uint64_t units = blocks / per_unit;
  if (shape.co_resident && blocks > host_co_resident_blocks()) {
    throw NotCoResident("run_grid_on_host: a co-resident grid " + dim_text(shape.grid) + " of " +
                        std::to_string(blocks) + " blocks, where the host executor holds " +
                        std::to_string(host_co_resident_blocks()) + " at once");
  }
  // A co-resident grid's blocks each get a worker thread, so that any of
  // them may wait for any other.
  const unsigned workers =
      shape.co_resident ? static_cast<unsigned>(blocks)
                        : static_cast<unsigned>(std::min<uint64_t>(host_executor_threads(), units));
  std::optional<GridRendezvous> rendezvous;
  if (shape.co_resident) rendezvous.emplace(blocks);
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;

  const auto worker = [&] {
    // Dynamic shared memory is 16-byte aligned on the GPU (device_ctx.cuh);
    // here too, whatever the allocator's own alignment, so the alignment
    // checks judge shared addresses as the GPU would.
    struct alignas(16) Chunk {
      unsigned char bytes[16];
    };
    // A cluster's blocks get theirs 1024-byte apart (64 chunks): on the GPU a
    // kernel's dynamic shared memory starts at the same address in every
    // block, so a kernel that aligns its stages inside it (to wgmma's 1024
    // bytes) puts them at the same offset in each, the offset
    // map_shared_rank carries to another block's.
    const std::size_t chunks_a_block = (shape.shared_bytes + 1023) / 1024 * 64;
    std::vector<Chunk> chunks(chunks_a_block * per_unit);
    std::vector<unsigned char*> shared_of(per_unit);
    for (uint32_t r = 0; r < per_unit; ++r)
      shared_of[r] = reinterpret_cast<unsigned char*>(chunks.data() + r * chunks_a_block);
    unsigned char* const shared = shared_of[0];
    // This thread's accesses are checked until it returns.
    memcheck::Scope scope(kernel, allocations);
    scope.set_shared(shared, shape.shared_bytes);
    scope.set_prior_grid(prior.get());
    scope.set_footprint(footprint.get());
    ctx::pooled_fixedsize_stack stacks(kFiberStackBytes);
    HostBlock state(stacks);
    std::vector<std::unique_ptr<HostBlock>> cluster_states;
    for (uint32_t r = 0; per_unit > 1 && r < per_unit; ++r)
      cluster_states.push_back(std::make_unique<HostBlock>(stacks));
    try {
      if (per_unit > 1) {
        for (uint64_t i = next++; i < units && !stop; i = next++) {
          run_cluster(shape, i, cluster_states, shared_of, body, scope);
        }
      }
      for (uint64_t i = per_unit > 1 ? blocks : next++; i < blocks && !stop; i = next++) {
        const Dim3 block = unflatten(i, shape.grid);
        std::fill_n(shared, shape.shared_bytes, 0xCD);  // shared memory starts undefined
        if (shape.uses_collectives) {
          state.run(shape, block, shared, body, scope, rendezvous ? &*rendezvous : nullptr);
        } else {
          run_block_plain(shape, block, shared, body, scope);
        }
        if (rendezvous) {
          rendezvous->block_done();
          break;  // one block a worker
        }
      }
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        stop = true;
      }
      if (rendezvous) rendezvous->abort();  // the blocks waiting on this one
    }
  };

  if (workers <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < workers; ++w) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (first_error) std::rethrow_exception(first_error);
  std::lock_guard<std::mutex> lock(g_footprint_mutex);
  g_last_footprint = footprint;
}

}  // namespace nvh
