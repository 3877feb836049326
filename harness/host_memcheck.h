// The host executor's memory checker: compute-sanitizer's memcheck, on the
// CPU. On the host, the portable load/store layer (portable_math.h) and the
// async copies (HostCtx::cp_async16/4) are memcpy, which takes any address;
// the GPU faults on a misaligned vector access or an address outside its
// allocations, and a read past a buffer returns garbage the tests may never
// notice. So while the host executor runs a kernel, every access made
// through the layer is checked here against the GPU's rules:
//   - alignment: an access of 1, 2, 4, 8 or 16 bytes is naturally aligned
//     (PTX ISA, "Addresses as Operands": the address is a multiple of the size);
//   - bounds: the bytes lie inside one allocation registered by the host
//     backend (its usable range: a GuardedBuffer's payload, not its guards),
//     or inside the running block's shared memory;
//   - space: a global-only access (ld.global.nc, a cp.async source) is not in
//     shared memory, and a cp.async destination is;
//   - order: in a launch that overlaps the grid before it
//     (LaunchShape::overlaps_prior_grid), no thread touches global memory
//     before its wait_prior_grid(): that grid may still be writing it. In
//     one independent of that grid (independent_of_prior_grid), whose grid
//     let it start early (lets_dependents_overlap, GridFootprint), a thread
//     may read before its wait the bytes that grid did not write and write
//     those it neither read nor wrote, and waits before it exits; and in the
//     grid that lets it start early, no block stores to global memory before
//     one of its threads has called launch_dependents() (else the overlap
//     that grid declares does not happen: a bug of time, not of bits);
//   - fences around a global atomic (blocks that count their arrivals, so
//     that the last one reads what the others stored): when a thread of a
//     block makes the atomic, every global store a thread of that block made
//     before it is followed by that thread's fence_global() (else a block
//     that sees the count may not see the store), and after the atomic no
//     thread of the block reads global memory until a thread of the block
//     has fenced after it (else it may read what it saw before the count).
//     On the CPU the store is visible anyway (x86 keeps stores in order, and
//     the executor's atomic is sequentially consistent), so without these
//     rules a missing fence would pass here and race, rarely, on the GPU.
//   - the async proxy (kernels that read shared memory with wgmma, launched
//     with LaunchShape::reads_shared_async): wgmma reads its shared operand
//     through the async proxy, which does not see the generic proxy's
//     writes (st.shared, cp.async) until the writer has executed
//     fence.proxy.async and a barrier has ordered that fence before the read
//     (PTX ISA, "Proxies" and "wgmma.mma_async"). AsyncProxyShadow below
//     tracks each 16-byte granule of shared memory from write to fence to
//     barrier, and the executor's wgmma fails on a granule not yet through.
//   - cp.async completion (blocks run as fibers): the executor copies at
//     once, but on the GPU a cp.async lands some time before the wait that
//     retires its group (cp_async_wait<n>: all but the thread's n newest
//     committed groups), is visible to its own thread from that wait on, to
//     the other lanes of its warp after a warp barrier (sync_warp: __syncwarp
//     orders memory among its lanes) and to the block's other threads after
//     a block barrier, each following the wait. CpAsyncShadow below tracks
//     each 4-byte granule from issue to wait to barrier: a read before then,
//     or a write into a copy still in flight, fails. An mbarrier phase
//     (HostCtx::mbarrier_arrive) hands the copies its arriving threads had
//     waited for to the threads ordered after it: those that wait on the
//     phase, and those ordered after them by another phase, a sync_warp or
//     a block barrier (ReleaseClocks). For the async proxy likewise: a
//     write fenced by its writer before it arrived reaches the wgmmas of
//     the threads ordered after the phase; one it had not fenced, the
//     wgmmas of threads ordered after a fence_proxy_async made after the
//     phase (AsyncProxyShadow).
//   - async copies after the reads they overwrite: a TMA box, or a
//     cp.async in a block that uses mbarriers, over bytes another thread
//     read since the last block barrier needs its issuing thread ordered
//     after that read (an mbarrier phase the reader arrived on after it,
//     such as a pipeline's "slot free"). On the host the threads take
//     turns, so a slow warp never shows the race; TmaShadow records each
//     read (thread, epoch) while the clocks are on, and each wgmma's B tile
//     as read by its warpgroup until the wait that retires it (a slot freed
//     before that wait is freed too early), and each copy checks them.
//   - races of plain shared-memory accesses (compute-sanitizer's
//     racecheck): a thread's access to a byte another thread wrote, or its
//     write over a byte another thread read, since the last block barrier,
//     without a sync_warp of their warp or an mbarrier phase between
//     (SharedRaceShadow below). The host's turns hide these too.
//   - distributed shared memory (thread-block clusters, LaunchShape::cluster):
//     a block reads another block's shared memory (map_shared_rank) only
//     across a cluster_sync() from that block's writes of it, writes its own
//     only across one from another block's reads of it, and exits only
//     across one from them: nothing else orders two blocks (ClusterShadow).
// A violation throws MemoryViolation, naming the kernel, the thread and block,
// the address, the access and the allocation it hit or was nearest to.
//
// Outside a launch (host code reading host-backend memory) nothing is
// checked: the per-thread scope below exists only while the executor runs
// a kernel's blocks. Host code only: the device side of the layer never
// calls it, so GPU code is what it was.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/kernel_ctx.h"

namespace nvh {

// A kernel broke one of the GPU's memory rules on the host executor.
class MemoryViolation : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace memcheck {

// wgmma_read: a wgmma's read of its shared tile, a load to every check but
// the race shadow's (SharedRaceShadow: the warpgroup's wait, not one
// thread, orders that read; the executor's wgmma rules cover it).
enum class Op : uint8_t { load, store, cp_async_read, cp_async_write, atomic, wgmma_read };
inline bool is_read(Op op) { return op == Op::load || op == Op::wgmma_read; }

// An address as the checker's and the executor's messages print it ("0x7f...").
std::string hex(uintptr_t a);

// Where an access may land: global memory only (ld.global.nc through
// __ldg, a cp.async source), shared memory only (a cp.async destination, an
// ldmatrix row),
// or either (a plain dereference, which the GPU resolves as a generic address).
enum class Space : uint8_t { global, shared, generic };

// One allocation: [base, base + bytes) was allocated, and kernels may touch
// [begin, end) of it (all of it unless the allocation was described narrower).
struct Region {
  uintptr_t base = 0, bytes = 0;
  uintptr_t begin = 0, end = 0;
  std::string label;
};
using Regions = std::vector<Region>;  // sorted by base, disjoint

// The registry of host-backend allocations. One for the process, not one per
// backend: run_grid_on_host does not know which backend launched it, and all
// host backends' memory is the same CPU memory. Thread-safe.
void register_allocation(const void* base, std::size_t bytes);
void unregister_allocation(const void* base) noexcept;
// Narrows what kernels may touch of a registered allocation to
// [base + offset, base + offset + bytes) and names it for messages.
// Throws std::invalid_argument when base is not registered or the range
// does not fit.
void describe_allocation(const void* base, std::size_t offset, std::size_t bytes,
                         const std::string& label);
// The registered allocations now; a launch checks against this snapshot.
std::shared_ptr<const Regions> registered_allocations();

// Vector clocks of a block's threads over its mbarriers: which releases
// (mbarrier arrivals) of each other thread a thread has acquired (by a
// wait that saw the phase complete), directly or through other threads or
// a sync_warp. (A block barrier settles every copy for every thread, so it
// needs no clock.) The PTX memory model orders an arrive
// before a wait that observes its phase, and happens-before is transitive;
// a thread's epoch is what its next arrive publishes of it. Off (no
// storage) until the block initializes an mbarrier. Hand-written: no
// library here models mbarrier phases.
//
// Besides the threads, a clock has a column per source: a writer that is
// not a thread, whose writes are released by an mbarrier phase alone (the
// TMA's copies on one mbarrier: TmaShadow). Its index is threads + i, and
// it is ordered after nothing.
class ReleaseClocks {
 public:
  void reset(uint32_t threads);
  void start();  // at the block's first mbarrier_init
  bool on() const { return !clock_.empty(); }
  // A new source's index (threads, threads + 1, ...); needs on().
  uint32_t add_source();
  // A phase completing with the source's writes in it: its epoch joins the
  // phase's clock and moves on. Returns the epoch its writes landed in.
  uint32_t release_source(uint32_t source, std::vector<uint32_t>& phase);
  // Thread t's epoch (1 from the start; 1 while off).
  uint32_t epoch(uint32_t t) const { return on() ? at(t, t) : 1; }
  // The latest epoch of `writer` that `reader` has acquired (0: none).
  uint32_t seen(uint32_t reader, uint32_t writer) const { return on() ? at(reader, writer) : 0; }
  // Whether `reader` is ordered after what `writer` did in its epoch
  // `epoch` (a thread is after its own past; nothing is while off).
  bool ordered_after(uint32_t reader, uint32_t writer, uint32_t epoch) const {
    return seen(reader, writer) >= epoch;
  }
  // An arrive by t: its clock joins the phase's, then its epoch moves on.
  void release(uint32_t t, std::vector<uint32_t>& phase);
  // A wait by t that saw the phase complete: the phase's clock joins t's.
  void acquire(uint32_t t, const std::vector<uint32_t>& phase);
  // A barrier of threads [first, first + count): each has seen what any had,
  // and each one's epoch moves on.
  void join(uint32_t first, uint32_t count);

 private:
  uint32_t& at(uint32_t t, uint32_t of) { return clock_[std::size_t{t} * width_ + of]; }
  uint32_t at(uint32_t t, uint32_t of) const { return clock_[std::size_t{t} * width_ + of]; }
  uint32_t threads_ = 0, width_ = 0;    // width_: threads and sources
  std::vector<uint32_t> clock_;         // threads x width_
  std::vector<uint32_t> source_epoch_;  // per source
};

// Which 16-byte granules of a block's shared memory the async proxy may not
// see yet, and for whom (header comment). A generic write reaches the async
// proxy of a thread R once a thread F that is ordered after the write has
// executed fence.proxy.async and R is ordered after F's fence (F may be the
// writer, or R itself): by a block barrier, which orders every thread
// after every fence, or by mbarrier phases and sync_warps (ReleaseClocks).
// Hand-written: no library models PTX proxies.
class AsyncProxyShadow {
 public:
  void reset(std::size_t shared_bytes, uint32_t threads, const ReleaseClocks& clocks);
  // A generic-proxy write of [offset, offset + width) by `thread`.
  void written(std::size_t offset, uint32_t width, uint32_t thread);
  // fence.proxy.async by `thread`: its own writes so far, and the writes
  // mbarrier phases handed over that it is ordered after, become visible to
  // the async proxy of the threads ordered after this fence.
  void fenced(uint32_t thread);
  // A block barrier: every fenced write is visible to every thread's async
  // proxy, and every thread is ordered after the writes handed over by a
  // completed phase (a fence by any thread then makes them visible).
  void barrier();
  // An mbarrier phase completed with arrivals of these threads (flags by
  // thread): what they wrote unfenced waits for a fence by a thread ordered
  // after the phase. (What they fenced needs nothing more: a thread that
  // waits on the phase is ordered after their fences through the clocks.)
  void released_by(const std::vector<bool>& arrived);
  // A write in [offset, offset + bytes) that the async proxy of threads
  // [first_reader, first_reader + readers) (a warpgroup's wgmma) may not see
  // yet: its writer (plus 1; 0: none), how far it got, and the first reader
  // it is hidden from.
  struct Pending {
    uint32_t writer_plus_1 = 0;
    bool fenced = false;    // fenced, but the reader is not ordered after any of its fences
    bool released = false;  // unfenced, handed over by an mbarrier phase
    uint32_t reader = 0, fencer = 0;  // with `fenced`: the reader, and one thread that fenced it
    std::size_t offset = 0;
  };
  Pending pending_for(std::size_t offset, std::size_t bytes, uint32_t first_reader,
                      uint32_t readers) const;

 private:
  enum : uint8_t { kVisible = 0, kWritten = 1, kFenced = 2, kReleased = 3 };
  struct Fence {
    uint32_t thread, epoch;  // the fencing thread and its epoch at the fence
  };
  void add_fencer(uint32_t g, uint32_t thread);
  std::vector<uint8_t> state_;                   // per granule
  std::vector<uint32_t> writer_;                 // per granule: the last writer
  std::vector<uint32_t> write_epoch_;            // per granule: the writer's epoch at the write
  std::vector<std::vector<Fence>> fences_;       // per granule: the fences that cover the write
  std::vector<std::vector<uint32_t>> unfenced_;  // per thread: granules it wrote since its fence
  std::vector<uint32_t> awaiting_barrier_;       // granules fenced since the last barrier
  std::vector<uint32_t> awaiting_fence_;         // granules handed over unfenced by an mbarrier
  const ReleaseClocks* clocks_ = nullptr;
};

// Which 4-byte granules of a block's shared memory hold a cp.async that a
// thread may not read yet (header comment). Hand-written: no library models
// cp.async's commit groups.
class CpAsyncShadow {
 public:
  // `clocks` (the block's, outliving this shadow's use) decide which thread
  // sees a copy an mbarrier phase handed over.
  void reset(std::size_t shared_bytes, uint32_t threads, const ReleaseClocks& clocks);
  // A cp.async of [offset, offset + width) issued by `thread`, in the group
  // its next commit closes.
  void issued(std::size_t offset, uint32_t width, uint32_t thread);
  void committed(uint32_t thread);
  // cp_async_wait<pending> by `thread`: its committed groups but the
  // `pending` newest have landed.
  void waited(uint32_t thread, uint32_t pending);
  // Every cp.async `thread` issued has landed, committed or not (the
  // arrival cp_async_mbarrier_arrive waits for).
  void landed_all(uint32_t thread);
  // sync_warp of warp `warp` (threads 32 warp ..), its barrier number
  // `generation`: what its threads' waits landed before it is visible to its
  // lanes. Calls after the first with the same generation do nothing.
  void warp_synced(uint32_t warp, uint64_t generation);
  // A block barrier: what landed before it is visible to every thread.
  void barrier();
  // An mbarrier phase completed with arrivals of these threads (flags by
  // thread): what their waits landed before they arrived is handed over,
  // to the threads whose clocks have acquired the landing epoch.
  void released_by(const std::vector<bool>& arrived);
  // Why `thread` may not read (or write) [offset, offset + width) yet; ""
  // when it may.
  std::string read_hazard(std::size_t offset, uint32_t width, uint32_t thread) const;
  std::string write_hazard(std::size_t offset, uint32_t width) const;
  // No granule holds a copy that is not yet visible to all: nothing to check.
  bool quiet() const { return unsettled_ == 0; }

 private:
  static constexpr uint32_t kGranule = 4;
  enum : uint8_t { kSettled = 0, kInFlight = 1, kLanded = 2, kWarpVisible = 3, kHandedOver = 4 };
  struct Copy {
    uint32_t granule, serial;
  };
  std::vector<uint8_t> state_;            // per granule
  std::vector<uint32_t> owner_, serial_;  // per granule: the last copy into it
  std::vector<uint32_t> landed_epoch_;    // per granule: its owner's epoch then
  const ReleaseClocks* clocks_ = nullptr;
  std::size_t handed_over_ = 0;                         // granules in kHandedOver
  std::vector<std::vector<std::vector<Copy>>> groups_;  // per thread: committed, oldest first
  std::vector<std::vector<Copy>> open_;                 // per thread: since its last commit
  std::vector<std::vector<uint32_t>> landed_;           // per warp: landed since its last sync
  std::vector<uint32_t> warp_visible_;                  // visible to their warp, not yet to all
  std::vector<uint64_t> synced_generation_;             // per warp: its last sync_warp
  uint32_t next_serial_ = 0;
  std::size_t unsettled_ = 0;
};

// Which 16-byte granules of a block's shared memory hold a TMA copy
// (HostCtx::tma_load_2d) that a thread may not touch yet, and which
// threads read each granule since the last block barrier. A copy is in
// flight from its issue until the phase of its mbarrier that counts its
// bytes completes; then it has landed in that phase, visible to the threads
// ordered after the phase (ReleaseClocks: the mbarrier's copies are a
// source), and to every thread once a block barrier follows a wait that saw
// it. A copy must also come after the reads of what it overwrites: the
// issuing thread ordered after every other thread's read of those bytes by
// a block barrier or an mbarrier phase the reader arrived on after reading
// (a pipeline's "slot free" barrier). Without that the GPU may land the
// copy before a slower warp has read the old contents; on the host, whose
// threads take turns, it never shows, so the reads are recorded (thread and
// epoch, while the clocks are on: a TMA copy needs an mbarrier) and each
// copy checks them. A warpgroup's wgmma reads of its tile are recorded
// always (with the clocks off only a block barrier orders them), and a
// plain store by a thread of another warpgroup over them needs the same
// order as a copy: the warpgroups run at once on the GPU, so the store may
// land before the wgmmas read. Hand-written: no library models the TMA's
// completion.
class TmaShadow {
 public:
  void reset(std::size_t shared_bytes, uint32_t threads, const ReleaseClocks& clocks);
  // A copy by `thread` into [offset, offset + bytes) on the mbarrier at
  // shared offset `barrier`: "" and the granules marked in flight (appended
  // to `granules`), or why it may not be issued (a TMA copy into them still
  // in flight, or a read of them by another thread not ordered before it).
  std::string issued(uint32_t thread, std::size_t offset, std::size_t bytes, std::size_t barrier,
                     std::vector<uint32_t>& granules);
  // `thread` read [offset, offset + width) (recorded while the clocks are on).
  void read_by(std::size_t offset, uint32_t width, uint32_t thread);
  // A warpgroup's wgmma read of [offset, offset + width), retired while
  // threads [first, first + epochs.size()) stood at `epochs` (a snapshot
  // of them, taken once a wait): a later copy over it needs its thread in
  // that warpgroup or ordered after one of them at or past its epoch there
  // (an arrive after the wait).
  uint32_t group_snapshot(std::vector<uint32_t> epochs);
  void group_read_by(std::size_t offset, uint32_t width, uint32_t first, uint32_t snapshot);
  // Why `thread` may not copy into [offset, offset + width) yet (`what`:
  // "a TMA copy", "a cp.async"): a read of it by another thread, or by
  // another warpgroup's wgmmas, it is not ordered after; "" when it may
  // (and the granules' reads are then forgotten).
  std::string overwrite_hazard(std::size_t offset, uint32_t width, uint32_t thread,
                               const char* what);
  // Why `thread` may not store into [offset, offset + width) yet: a read of
  // it by another warpgroup's wgmmas it is not ordered after; "" when it
  // may. Threads' reads are left to the race shadow (SharedRaceShadow, which
  // also orders by sync_warp) and stay recorded for later copies.
  std::string store_hazard(std::size_t offset, uint32_t width, uint32_t thread) const;
  bool has_group_reads() const { return !snapshots_.empty(); }
  // The phase counting these granules' copies completed; the copies landed
  // at `epoch` of clock source `source`.
  void landed(const std::vector<uint32_t>& granules, uint32_t source, uint32_t epoch);
  // A block barrier: copies that some thread had seen land are visible to all.
  void barrier();
  // Why `thread` may not read (or write) [offset, offset + width) yet; "" when it may.
  std::string read_hazard(std::size_t offset, uint32_t width, uint32_t thread) const;
  std::string write_hazard(std::size_t offset, uint32_t width, uint32_t thread);
  // Why the async proxy of threads [first, first + count) (a warpgroup's
  // wgmma) may not read [offset, offset + width) yet; "" when it may.
  std::string group_hazard(std::size_t offset, uint32_t width, uint32_t first,
                           uint32_t count) const;
  bool quiet() const { return unsettled_ == 0; }
  bool records_reads() const { return clocks_ != nullptr && clocks_->on(); }

 private:
  static constexpr uint32_t kGranule = 16;
  enum : uint8_t { kSettled = 0, kInFlight = 1, kLanded = 2 };
  struct Landing {
    uint32_t source, epoch;
    std::vector<uint32_t> granules;
  };
  bool sees(uint32_t thread, uint32_t g) const {
    return clocks_->ordered_after(thread, source_[g], epoch_[g]);
  }
  std::string hazard(uint32_t g, uint32_t thread, const char* what) const;
  // The first granule of [offset, offset + width) that threads [first,
  // first + count) may not touch yet, as `what` (hazard), or "".
  std::string first_hazard(std::size_t offset, uint32_t width, uint32_t first, uint32_t count,
                           const char* what) const;
  void settle(uint32_t g);
  std::vector<uint8_t> state_;            // per granule
  std::vector<uint32_t> barrier_;         // per granule: its copy's mbarrier (shared offset)
  std::vector<uint32_t> source_, epoch_;  // per granule, landed: when
  std::vector<Landing> landings_;         // not yet seen by every thread
  static constexpr uint32_t kThreadRead = 0xFFFFFFFFu;
  struct Read {
    uint32_t thread;    // the reader; a warpgroup's read: its first thread
    uint32_t epoch;     // a thread's read: its epoch then
    uint32_t snapshot;  // a warpgroup's read: its epochs in snapshots_; else kThreadRead
  };
  std::vector<std::vector<uint32_t>> snapshots_;  // since the last block barrier
  bool ordered_after_read(uint32_t thread, const Read& r) const;
  std::string reader_name(const Read& r) const;
  void record(std::size_t offset, uint32_t width, Read read);
  std::vector<std::vector<Read>> readers_;  // per granule, since the last block barrier
  std::vector<uint32_t> read_granules_;     // the granules with readers
  const ReleaseClocks* clocks_ = nullptr;
  uint32_t threads_ = 0;
  std::size_t unsettled_ = 0;
};

// Races of plain shared-memory accesses between a block's threads:
// compute-sanitizer's racecheck, on the host. Since the last block barrier,
// a thread's access to a byte another thread wrote (read-after-write,
// write-after-write), or its write to a byte another thread read
// (write-after-read), needs the thread ordered after that access: by a
// sync_warp of their warp since, or by mbarrier phases (ReleaseClocks). On
// the GPU the threads run at once; on the host they take turns, so a warp
// that writes before a later warp reads always wins here, and without this
// check the race never shows in the results. A cp.async counts as its
// thread's write at issue (CpAsyncShadow says when it lands); a TMA box,
// written by no thread, checks the writes it overwrites and then clears its
// bytes' records (TmaShadow orders its reads). A wgmma's read of its tile
// is not recorded (Op::wgmma_read: each thread's own wgmma_wait orders it
// for that thread; the wgmma rules and TmaShadow hold it). Per byte: the
// last write, and the latest read of each of the first two warps that read
// it since that write (a third warp's reads are not recorded: a race it
// takes part in may pass here, but no legal order fails). Hand-written: no
// library models a GPU block's happens-before.
class SharedRaceShadow {
 public:
  // Sizes the records for `shared_bytes` (kept between blocks, never
  // cleared: a block barrier or a new block starts a new generation).
  void reset(std::size_t shared_bytes, uint32_t threads, const ReleaseClocks& clocks);
  // A load (read) or a store or cp.async (write) of [offset, offset +
  // width) by `thread`: "" and recorded, or why it races.
  std::string read(std::size_t offset, uint32_t width, uint32_t thread);
  std::string write(std::size_t offset, uint32_t width, uint32_t thread);
  // A TMA box into [offset, offset + bytes) issued by `thread`: "" and the
  // bytes' records cleared, or why it races with a write there.
  std::string copied_over(std::size_t offset, std::size_t bytes, uint32_t thread);
  // A sync_warp of warp `warp` completed.
  void warp_synced(uint32_t warp) { ++syncs_[warp]; }
  // A block barrier: every access so far is ordered before every thread.
  void barrier();

 private:
  static constexpr uint16_t kNone = 0;
  struct Access {
    uint16_t thread_plus_1 = kNone;  // the thread (plus 1); kNone: no access
    bool several = false;            // a read slot: other lanes of the warp read too
    uint16_t latest = 0;             // a read slot: the thread of its latest read
    uint32_t epoch = 0, sync = 0;    // that access's clock epoch and warp's sync count
  };
  struct Cell {
    uint32_t generation = 0;
    Access write;
    Access reads[2];  // by warp
  };
  Access stamp(uint32_t thread) const;
  // Whether `thread` is ordered after access `a` by thread `by`, and after
  // the reads of read slot `r`.
  bool ordered_after(uint32_t thread, uint32_t by, const Access& a) const;
  // Whether `thread` shares a warp with `by` and a sync_warp of it completed
  // after the warp's count was `sync`.
  bool warp_synced_since(uint32_t thread, uint32_t by, uint32_t sync) const;
  bool ordered_after_reads(uint32_t thread, const Access& r) const;
  Cell& cell(std::size_t offset);
  // Why `thread`'s access (`kind`) after the cell's write races, or "".
  std::string after_write(const Cell& c, std::size_t at, uint32_t thread, const char* kind) const;
  std::string race(const char* kind, std::size_t offset, uint32_t thread,
                   const std::string& other_did) const;
  std::vector<Cell> cells_;
  std::vector<uint32_t> syncs_;  // per warp: sync_warps completed
  uint32_t generation_ = 0;
  const ReleaseClocks* clocks_ = nullptr;
};

// The shared memory of a thread-block cluster's blocks (LaunchShape::cluster),
// which they read across (HostCtx::map_shared_rank), and the order of those
// reads. Only the cluster's barrier (cluster_sync: arrive with release, wait
// with acquire) orders one block's accesses before another's, so, numbering
// the barrier's completions (the cluster's phase): a read of bytes another
// block wrote in the same phase races (it may see the old bytes); so does a
// write over bytes another block read in the same phase (the reader may see
// the new ones), and a block's exit in a phase in which another read its
// shared memory, or a read of a block's after it exited (the memory is gone
// once the block is). Judged by phase, not by the order in which the host
// happened to run the two accesses, so a race fails however the blocks took
// turns. Remote writes are not emulated: one fails as such. Hand-written: no
// library models clusters.
class ClusterShadow {
 public:
  // The cluster's blocks (by rank) and their shared memory's size.
  void reset(const std::vector<Dim3>& blocks, std::size_t shared_bytes);
  // Where block `rank`'s shared memory lies (rank 0 first).
  void place(uint32_t rank, const unsigned char* shared);
  // The rank whose shared memory holds address a, or -1.
  int rank_of(uintptr_t a) const;
  uintptr_t base(uint32_t rank) const { return blocks_[rank].base; }
  std::size_t shared_bytes() const { return bytes_; }
  const Dim3& block(uint32_t rank) const { return blocks_[rank].index; }
  // The cluster's barrier completed.
  void barrier() { ++phase_; }
  // Block `rank` wrote its own [offset, offset + width): "" or the race.
  std::string written(uint32_t rank, std::size_t offset, std::size_t width);
  // Block `reader` read [offset, offset + width) of block `owner`'s: "" or the race.
  std::string read_remote(uint32_t reader, uint32_t owner, std::size_t offset, uint32_t width);
  // Block `rank`'s last thread exited: "" or the reads it leaves dangling.
  std::string exited(uint32_t rank);

 private:
  static constexpr uint32_t kGranule = 4;
  struct Block {
    Dim3 index;
    uintptr_t base = 0;
    std::vector<uint32_t> written;  // per granule: the phase of the owner's last write (0: none)
    std::vector<uint32_t> read;     // per granule: the phase of another block's last read
    std::vector<uint8_t> reader;    // per granule: that read's block
    uint32_t gone = 0;              // the phase it exited in (0: running)
    uint32_t read_in = 0;           // the phase of the last read of it by another block
    uint8_t last_reader = 0;
  };
  std::string who(uint32_t rank) const;
  std::vector<Block> blocks_;
  std::size_t bytes_ = 0;
  uint32_t phase_ = 1;
  uintptr_t lowest_ = 0, highest_end_ = 0;  // the span of the blocks' shared memory (place())
};

// The global bytes one grid read and wrote, a bit a byte over the
// allocations of its launch, set by its worker threads at once: recorded
// where the grid lets the launch after it start early
// (LaunchShape::lets_dependents_overlap), for that launch's rule
// (independent_of_prior_grid): before its wait_prior_grid() a thread may
// read bytes this grid did not write and write bytes it neither read nor
// wrote. Hand-written: a bitmap a region, no library does this.
class GridFootprint {
 public:
  explicit GridFootprint(std::shared_ptr<const Regions> regions);
  // Records a global access of this grid (accesses outside every
  // allocation, which the bounds check fails, are not recorded).
  void record(uintptr_t a, uint32_t width, Op op);
  // "" where the launch after may make this access before its wait, else
  // what this grid did to the bytes ("writes" or "reads").
  std::string conflict(uintptr_t a, uint32_t width, Op op) const;

 private:
  struct Bits {
    std::unique_ptr<std::atomic<uint64_t>[]> read, written;
  };
  // The region holding [a, a + width) and its index, or null.
  const Region* region_of(uintptr_t a, uint32_t width, std::size_t* index) const;
  static bool any(const std::atomic<uint64_t>* bits, uintptr_t first, uint32_t width);
  std::shared_ptr<const Regions> regions_;
  std::vector<Bits> bits_;
};

// The ordering duties the checker tracks for one thread (the executor keeps
// one per thread, and one block flag per block).
struct ThreadOrder {
  bool awaiting_prior_grid = false;  // overlaps_prior_grid, until wait_prior_grid()
  uintptr_t unfenced_store = 0;      // a global store since the thread's last fence (0: none)
  uint32_t unfenced_width = 0;
  // The address of the block's last global atomic while no thread of the
  // block has fenced since (0: none); shared by the block's threads.
  uintptr_t* block_atomic_unfenced = nullptr;
  // Whether a thread of the block has called launch_dependents() (the PTX
  // ISA: the block's first call is the one that counts); shared by the
  // block's threads.
  bool* block_triggered_dependents = nullptr;
  // The block's async-proxy shadow when the launch reads shared memory
  // through the async proxy (null otherwise), and this thread's index in
  // the block, which the shadow records as a granule's writer.
  AsyncProxyShadow* async_proxy = nullptr;
  uint32_t linear_thread = 0;
  // The block's cp.async shadow when its threads run as fibers (null
  // otherwise).
  CpAsyncShadow* cp_async = nullptr;
  // The block's TMA shadow, the same way.
  TmaShadow* tma = nullptr;
  // The block's race shadow, the same way.
  SharedRaceShadow* race = nullptr;
};

// Kernels' global-memory accesses by kind and width (1, 2, 4, 8, 16 bytes),
// counted in the launches that begin while a HostAccessLog (host_executor.h)
// has installed one here (each worker's Scope reads it once).
struct AccessCounts {
  static constexpr int kOps = 6, kWidths = 5;
  static_assert(static_cast<int>(Op::wgmma_read) + 1 == kOps, "a row of counts an Op");
  std::atomic<uint64_t> n[kOps][kWidths] = {};
  static int width_index(uint32_t width) {
    for (int i = 0; i < kWidths; ++i) {
      if (width == 1u << i) return i;
    }
    return -1;
  }
  void count(Op op, uint32_t width) {
    const int w = width_index(width);
    if (w >= 0) n[static_cast<int>(op)][w].fetch_add(1, std::memory_order_relaxed);
  }
};
inline std::atomic<AccessCounts*> g_access_counts{nullptr};

// What the checker knows while one worker thread runs blocks of one launch:
// the kernel, the allocations, the block's shared memory, and which thread
// is running (the executor updates it before running each thread). Installs
// itself as this thread's current scope; the destructor restores the previous one.
class Scope {
 public:
  Scope(const char* kernel, std::shared_ptr<const Regions> regions);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  void set_shared(const unsigned char* shared, std::size_t bytes);
  // The running block's cluster and its rank there (null: not clustered).
  void set_cluster(ClusterShadow* cluster, uint32_t rank) {
    cluster_ = cluster;
    cluster_rank_ = rank;
  }
  // The grid before this launch's footprint, where this launch is
  // independent of it and it recorded one (null: a global access before
  // wait_prior_grid() fails); this launch's own, where it records one.
  void set_prior_grid(const GridFootprint* prior) { prior_ = prior; }
  void set_footprint(GridFootprint* footprint) { footprint_ = footprint; }
  // A thread of a launch independent of the grid before it exits while it
  // has not waited for that grid: throws MemoryViolation.
  [[noreturn]] void fail_exit_before_wait() const;
  // `order`: the thread's ordering duties (null: none are checked).
  void set_thread(const Dim3* thread, const Dim3* block, ThreadOrder* order = nullptr) {
    thread_ = thread;
    block_ = block;
    order_ = order;
  }

  // Counts an access at `a` where a log asked for counts, if it is to
  // global memory: neither the running block's shared memory nor, in a
  // cluster, another block's.
  void count(uintptr_t a, uint32_t width, Op op) {
    if (counts_ && !(a >= shared_.begin && a < shared_.end) &&
        !(cluster_ && cluster_->rank_of(a) >= 0))
      counts_->count(op, width);
  }

  // Inline for the legal accesses that hit shared memory or an allocation
  // this thread touched recently (few compares); everything else goes to
  // check_slow, which finds the allocation, remembers it, or throws.
  void check(uintptr_t a, uint32_t width, Op op, Space space) {
    const uintptr_t last = a + width;
    if (cluster_ && !(a >= shared_.begin && a < shared_.end) && cluster_->rank_of(a) >= 0) {
      check_remote(a, width, op, space);
      return;
    }
    if (order_ && !(a >= shared_.begin && last <= shared_.end)) check_order(a, width, op);
    if ((a & (width - 1)) == 0) {
      if (a >= shared_.begin && last <= shared_.end) {
        if (space != Space::global) {
          if (order_ && order_->cp_async &&
              (op == Op::cp_async_write || !order_->cp_async->quiet())) {
            check_cp_async(a - shared_.begin, width, op);
          }
          if (order_ && order_->tma &&
              (!order_->tma->quiet() || (is_read(op) && order_->tma->records_reads())))
            check_tma(a - shared_.begin, width, op);
          if (order_ && order_->async_proxy && (op == Op::store || op == Op::cp_async_write)) {
            order_->async_proxy->written(a - shared_.begin, width, order_->linear_thread);
          }
          if (order_ && order_->tma && op == Op::store && order_->tma->has_group_reads())
            check_store_over_group_read(a - shared_.begin, width);
          if (order_ && order_->race && op != Op::wgmma_read)
            check_race(a - shared_.begin, width, op);
          if (cluster_ && (op == Op::store || op == Op::cp_async_write))
            check_cluster_write(a - shared_.begin, width, op);
          return;
        }
      } else if (space != Space::shared) {
        for (const Hit& h : hits_) {
          if (a >= h.begin && last <= h.end) return;
        }
      }
    }
    check_slow(a, width, op, space);
  }

  // A global atomic at `a` while the block's thread `other` holds a store
  // it has not fenced (`store`, that thread's order): throws MemoryViolation.
  [[noreturn]] void fail_unfenced_store(uintptr_t a, const Dim3& other,
                                        const ThreadOrder& store) const;

 private:
  struct Hit {
    uintptr_t begin = 0, end = 0;
  };
  static constexpr int kHits = 4;  // a kernel body reads a few operands in turn

  void check_slow(uintptr_t a, uint32_t width, Op op, Space space);
  const Region* containing(uintptr_t a) const;
  const Region* nearest(uintptr_t a) const;
  [[noreturn]] void fail(uintptr_t a, uint32_t width, Op op, const std::string& problem,
                         const Region* region, bool inside) const;
  [[noreturn]] void fail_order(uintptr_t a, uint32_t width, Op op,
                               const std::string& problem) const;
  // `prior`: what the grid before did to the bytes (GridFootprint::conflict),
  // empty where it recorded nothing.
  [[noreturn]] void fail_before_wait(uintptr_t a, uint32_t width, Op op,
                                     const std::string& prior = "") const;
  // The order rules for an access outside shared memory (header comment).
  void check_order(uintptr_t a, uint32_t width, Op op) {
    if (order_->awaiting_prior_grid) {
      if (!prior_) fail_before_wait(a, width, op);
      const std::string conflict = prior_->conflict(a, width, op);
      if (!conflict.empty()) fail_before_wait(a, width, op, conflict);
    }
    if (footprint_) {
      footprint_->record(a, width, op);
      if (op == Op::store && order_->block_triggered_dependents &&
          !*order_->block_triggered_dependents)
        fail_store_before_trigger(a, width);
    }
    if (order_->block_atomic_unfenced && *order_->block_atomic_unfenced &&
        (op == Op::load || op == Op::cp_async_read))
      fail_after_atomic(a, width, op);
    if (op == Op::store) {
      order_->unfenced_store = a;
      order_->unfenced_width = width;
    }
  }
  [[noreturn]] void fail_after_atomic(uintptr_t a, uint32_t width, Op op) const;
  [[noreturn]] void fail_store_before_trigger(uintptr_t a, uint32_t width) const;
  // CpAsyncShadow's rules for a shared-memory access at `offset`; records a
  // cp.async write as issued.
  void check_cp_async(std::size_t offset, uint32_t width, Op op);
  // TmaShadow's rules for a shared-memory access at `offset`.
  void check_tma(std::size_t offset, uint32_t width, Op op);
  // A plain store over a tile another warpgroup's wgmmas read (TmaShadow).
  void check_store_over_group_read(std::size_t offset, uint32_t width);
  // SharedRaceShadow's rules, the same way.
  void check_race(std::size_t offset, uint32_t width, Op op);
  // An access to another block's shared memory in the cluster (ClusterShadow).
  void check_remote(uintptr_t a, uint32_t width, Op op, Space space);
  // ClusterShadow's rule for the running block's write of its own shared memory.
  void check_cluster_write(std::size_t offset, uint32_t width, Op op);

  const char* kernel_;
  std::shared_ptr<const Regions> regions_;
  Region shared_;
  Hit hits_[kHits];
  int next_hit_ = 0;
  const Dim3* thread_ = nullptr;
  const Dim3* block_ = nullptr;
  ThreadOrder* order_ = nullptr;
  const GridFootprint* prior_ = nullptr;
  GridFootprint* footprint_ = nullptr;
  ClusterShadow* cluster_ = nullptr;
  uint32_t cluster_rank_ = 0;
  AccessCounts* counts_ = g_access_counts.load();  // a HostAccessLog's, or null
  Scope* previous_;
};

// This thread's scope, null outside a launch. Constant-initialised, so an
// access is a plain thread-local load, no guard call.
inline thread_local Scope* t_current = nullptr;

// The check every access of the portable layer makes on the host, and its
// count where a log asks for one.
inline void check_access(const void* p, uint32_t width, Op op, Space space) {
  if (Scope* s = t_current) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    s->check(a, width, op, space);
    s->count(a, width, op);
  }
}

}  // namespace memcheck
}  // namespace nvh
