#include "harness/host_memcheck.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>

namespace nvh {
namespace memcheck {
namespace {

class Registry {
 public:
  static Registry& global() {
    static Registry r;
    return r;
  }

  void add(uintptr_t base, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    Region& r = regions_[base];
    r = Region{base, bytes, base, base + bytes, ""};
    snapshot_.reset();
  }

  void remove(uintptr_t base) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (regions_.erase(base)) snapshot_.reset();
  }

  void describe(uintptr_t base, std::size_t offset, std::size_t bytes, const std::string& label) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = regions_.find(base);
    if (it == regions_.end()) {
      throw std::invalid_argument("memcheck::describe_allocation: base = " + hex(base) +
                                  ": not an allocation of the host backend");
    }
    if (offset > it->second.bytes || bytes > it->second.bytes - offset) {
      throw std::invalid_argument(
          "memcheck::describe_allocation: offset = " + std::to_string(offset) +
          ", bytes = " + std::to_string(bytes) + ": past the end of the " +
          std::to_string(it->second.bytes) + "-byte allocation");
    }
    it->second.begin = base + offset;
    it->second.end = base + offset + bytes;
    it->second.label = label;
    snapshot_.reset();
  }

  std::shared_ptr<const Regions> snapshot() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!snapshot_) {
      auto all = std::make_shared<Regions>();
      all->reserve(regions_.size());
      for (const auto& [base, region] : regions_) all->push_back(region);
      snapshot_ = std::move(all);
    }
    return snapshot_;
  }

  static std::string hex(uintptr_t a) {
    char text[2 + 2 * sizeof a + 1];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(a));
    return text;
  }

 private:
  std::mutex mutex_;
  std::map<uintptr_t, Region> regions_;
  // Rebuilt after a change, then shared by the launches until the next one.
  std::shared_ptr<const Regions> snapshot_;
};

std::string byte_count(uintptr_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

std::string dims(const Dim3* d) {
  if (!d) return "(?)";
  return "(" + std::to_string(d->x) + "," + std::to_string(d->y) + "," + std::to_string(d->z) + ")";
}

const char* op_name(Op op) {
  switch (op) {
    case Op::load:
      return "load";
    case Op::store:
      return "store";
    case Op::cp_async_read:
      return "cp.async read";
    case Op::cp_async_write:
      return "cp.async write";
    case Op::atomic:
      return "atomic";
    case Op::wgmma_read:
      return "wgmma read";
  }
  return "access";  // LCOV_EXCL_LINE: every Op is named above
}

// Bytes from a to the region's usable range: 0 inside it.
uintptr_t distance(uintptr_t a, const Region& r) {
  if (a < r.begin) return r.begin - a;
  return a >= r.end ? a - r.end + 1 : 0;
}

// The allocation whose whole (guards included) holds a, or null.
const Region* allocation_holding(const Regions& regions, uintptr_t a) {
  const auto after = std::upper_bound(regions.begin(), regions.end(), a,
                                      [](uintptr_t x, const Region& r) { return x < r.base; });
  if (after == regions.begin()) return nullptr;
  const Region& r = *std::prev(after);
  return a < r.base + r.bytes ? &r : nullptr;
}

}  // namespace

std::string hex(uintptr_t a) { return Registry::hex(a); }

void register_allocation(const void* base, std::size_t bytes) {
  Registry::global().add(reinterpret_cast<uintptr_t>(base), bytes);
}

void unregister_allocation(const void* base) noexcept {
  Registry::global().remove(reinterpret_cast<uintptr_t>(base));
}

void describe_allocation(const void* base, std::size_t offset, std::size_t bytes,
                         const std::string& label) {
  Registry::global().describe(reinterpret_cast<uintptr_t>(base), offset, bytes, label);
}

std::shared_ptr<const Regions> registered_allocations() { return Registry::global().snapshot(); }

Scope::Scope(const char* kernel, std::shared_ptr<const Regions> regions)
    : kernel_(kernel), regions_(std::move(regions)), previous_(t_current) {
  shared_.label = "shared memory";
  t_current = this;
}

Scope::~Scope() { t_current = previous_; }

void Scope::set_shared(const unsigned char* shared, std::size_t bytes) {
  const auto p = reinterpret_cast<uintptr_t>(shared);
  shared_.base = shared_.begin = p;
  shared_.bytes = bytes;
  shared_.end = p + bytes;
}

GridFootprint::GridFootprint(std::shared_ptr<const Regions> regions)
    : regions_(std::move(regions)), bits_(regions_->size()) {
  for (std::size_t i = 0; i < bits_.size(); ++i) {
    const std::size_t words = ((*regions_)[i].bytes + 63) / 64;
    bits_[i].read.reset(new std::atomic<uint64_t>[words]());
    bits_[i].written.reset(new std::atomic<uint64_t>[words]());
  }
}

const Region* GridFootprint::region_of(uintptr_t a, uint32_t width, std::size_t* index) const {
  const Region* r = allocation_holding(*regions_, a);
  if (!r || a + width > r->base + r->bytes) return nullptr;
  *index = static_cast<std::size_t>(r - regions_->data());
  return r;
}

namespace {

// Calls f(word, mask) for each 64-bit word of a bit-a-byte map that bytes
// [first, first + width) fall in, mask holding their bits: one or two words
// for an access of at most 16 bytes, so one atomic a word, not one a byte.
template <class F>
void for_each_word(uintptr_t first, uint32_t width, F f) {
  for (uintptr_t b = first; b < first + width;) {
    const uintptr_t end = std::min<uintptr_t>(first + width, (b / 64 + 1) * 64);
    const uint32_t bits = static_cast<uint32_t>(end - b);
    const uint64_t mask = (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1) << (b % 64);
    f(b / 64, mask);
    b = end;
  }
}

}  // namespace

void GridFootprint::record(uintptr_t a, uint32_t width, Op op) {
  std::size_t i = 0;
  const Region* r = region_of(a, width, &i);
  if (!r) return;
  const bool reads = op != Op::store, writes = op == Op::store || op == Op::atomic;
  for_each_word(a - r->base, width, [&](uintptr_t word, uint64_t mask) {
    if (reads) bits_[i].read[word].fetch_or(mask, std::memory_order_relaxed);
    if (writes) bits_[i].written[word].fetch_or(mask, std::memory_order_relaxed);
  });
}

bool GridFootprint::any(const std::atomic<uint64_t>* bits, uintptr_t first, uint32_t width) {
  bool set = false;
  for_each_word(first, width, [&](uintptr_t word, uint64_t mask) {
    set = set || (bits[word].load(std::memory_order_relaxed) & mask) != 0;
  });
  return set;
}

std::string GridFootprint::conflict(uintptr_t a, uint32_t width, Op op) const {
  std::size_t i = 0;
  const Region* r = region_of(a, width, &i);
  if (!r) return "";  // outside every allocation: the bounds check's to fail
  const uintptr_t first = a - r->base;
  if (any(bits_[i].written.get(), first, width)) return "writes";
  const bool writes = op == Op::store || op == Op::atomic;
  if (writes && any(bits_[i].read.get(), first, width)) return "reads";
  return "";
}

// The registered allocation whose whole (guards included) holds a.
const Region* Scope::containing(uintptr_t a) const { return allocation_holding(*regions_, a); }

// The allocation (or shared memory) whose usable range is closest to a.
const Region* Scope::nearest(uintptr_t a) const {
  const Region* best = shared_.bytes ? &shared_ : nullptr;
  const auto after = std::upper_bound(regions_->begin(), regions_->end(), a,
                                      [](uintptr_t x, const Region& r) { return x < r.base; });
  for (auto it : {after, after == regions_->begin() ? regions_->end() : std::prev(after)}) {
    if (it == regions_->end()) continue;
    if (!best || distance(a, *it) < distance(a, *best)) best = &*it;
  }
  return best;
}

void Scope::check_slow(uintptr_t a, uint32_t width, Op op, Space space) {
  const bool in_shared = a >= shared_.begin && a < shared_.end;
  const Region* region = in_shared ? &shared_ : containing(a);
  std::string problem;
  const auto add = [&problem](const std::string& what) {
    problem += (problem.empty() ? "" : "; ") + what;
  };
  if (a % width != 0)
    add("misaligned (the address of a " + std::to_string(width) + "-byte access is a multiple of " +
        std::to_string(width) + ")");
  if (!region || a < region->begin || a + width > region->end) {
    add("out of bounds");
  } else if (in_shared && space == Space::global) {
    add("in shared memory, which a global-only access cannot reach");
  } else if (!in_shared && space == Space::shared) {
    add("not in shared memory, which a cp.async destination or an ldmatrix row must be");
  }
  if (problem.empty()) {
    if (!in_shared) {  // legal: remember the allocation for the fast path
      hits_[next_hit_] = Hit{region->begin, region->end};
      next_hit_ = (next_hit_ + 1) % kHits;
    }
    return;
  }
  fail(a, width, op, problem, region ? region : nearest(a), region != nullptr);
}

void Scope::fail(uintptr_t a, uint32_t width, Op op, const std::string& problem,
                 const Region* region, bool inside) const {
  std::string m = "memcheck: kernel " + std::string(kernel_) + ", thread " + dims(thread_) +
                  ", block " + dims(block_) + ": " + std::to_string(width) + "-byte " +
                  op_name(op) + " at " + hex(a) + " is " + problem;
  if (!region) throw MemoryViolation(m + "; no allocation is registered");
  const auto offset = static_cast<long long>(a - region->begin);
  m += std::string("; ") + (inside ? "in" : "nearest") + " allocation \"" +
       (region->label.empty() ? "unlabelled" : region->label) + "\" (base " + hex(region->begin) +
       ", " + byte_count(region->end - region->begin);
  if (region->begin != region->base || region->end != region->base + region->bytes) {
    m += ", inside a " + std::to_string(region->bytes) + "-byte allocation at " + hex(region->base);
  }
  m += "), offset " + std::to_string(offset);
  if (a + width > region->end) {
    m += " (" + byte_count(a + width - region->end) + " past its end)";
  } else if (a < region->begin) {
    m += " (" + byte_count(region->begin - a) + " before its start)";
  }
  throw MemoryViolation(m);
}

// A violation of an order rule at `a`: the allocation it hit, or the nearest.
void Scope::fail_order(uintptr_t a, uint32_t width, Op op, const std::string& problem) const {
  const Region* region = containing(a);
  fail(a, width, op, problem, region ? region : nearest(a), region != nullptr);
}

void Scope::fail_before_wait(uintptr_t a, uint32_t width, Op op, const std::string& prior) const {
  if (prior.empty()) {
    fail_order(a, width, op,
               "before the thread's wait_prior_grid(), in a launch that overlaps the grid before "
               "it (programmatic dependent launch: that grid may still be writing global memory)");
  }
  fail_order(a, width, op,
             "before the thread's wait_prior_grid(), in a launch independent of the grid before "
             "it, which " +
                 prior + " these bytes (that grid may still be running)");
}

void Scope::fail_exit_before_wait() const {
  throw MemoryViolation("memcheck: kernel " + std::string(kernel_) + ", thread " + dims(thread_) +
                        ", block " + dims(block_) +
                        ": exits before its wait_prior_grid(), in a launch independent of the "
                        "grid before it (this grid may then end before that one, and the work "
                        "after it on the stream relies on both)");
}

void Scope::fail_after_atomic(uintptr_t a, uint32_t width, Op op) const {
  fail_order(a, width, op,
             "after the block's global atomic at " + hex(*order_->block_atomic_unfenced) +
                 " and before any fence_global() of the block after it (__threadfence: without "
                 "it the read may return what the SM held before another block's fenced store)");
}

void Scope::fail_store_before_trigger(uintptr_t a, uint32_t width) const {
  fail_order(a, width, Op::store,
             "before any thread of its block has called launch_dependents(), in a launch that "
             "lets the launch after it overlap (lets_dependents_overlap): that launch can then "
             "start only as this block's work ends, and the overlap the flag declares is lost");
}

void Scope::fail_unfenced_store(uintptr_t a, const Dim3& other, const ThreadOrder& store) const {
  const Region* stored = containing(store.unfenced_store);
  fail_order(
      a, 4, Op::atomic,
      "made while thread " + dims(&other) + " of the block has a " +
          std::to_string(store.unfenced_width) + "-byte store at " + hex(store.unfenced_store) +
          (stored && !stored->label.empty() ? " (\"" + stored->label + "\")" : std::string()) +
          " that no fence_global() of that thread follows, nor one of this thread after a block "
          "barrier since (__threadfence: a block that sees this atomic may not yet see that "
          "store)");
}

void Scope::check_cp_async(std::size_t offset, uint32_t width, Op op) {
  CpAsyncShadow& shadow = *order_->cp_async;
  const std::string hazard = is_read(op) ? shadow.read_hazard(offset, width, order_->linear_thread)
                                         : shadow.write_hazard(offset, width);
  if (!hazard.empty()) fail_order(shared_.begin + offset, width, op, hazard);
  if (op == Op::cp_async_write && order_->tma && order_->tma->records_reads()) {
    const std::string over =
        order_->tma->overwrite_hazard(offset, width, order_->linear_thread, "a cp.async");
    if (!over.empty()) fail_order(shared_.begin + offset, width, op, over);
  }
  if (op == Op::cp_async_write) shadow.issued(offset, width, order_->linear_thread);
}

void Scope::check_store_over_group_read(std::size_t offset, uint32_t width) {
  const std::string hazard = order_->tma->store_hazard(offset, width, order_->linear_thread);
  if (!hazard.empty()) fail_order(shared_.begin + offset, width, Op::store, hazard);
}

void Scope::check_tma(std::size_t offset, uint32_t width, Op op) {
  TmaShadow& shadow = *order_->tma;
  const std::string hazard = is_read(op)
                                 ? shadow.read_hazard(offset, width, order_->linear_thread)
                                 : shadow.write_hazard(offset, width, order_->linear_thread);
  if (!hazard.empty()) fail_order(shared_.begin + offset, width, op, hazard);
  if (is_read(op)) shadow.read_by(offset, width, order_->linear_thread);
}

void TmaShadow::reset(std::size_t shared_bytes, uint32_t threads, const ReleaseClocks& clocks) {
  const std::size_t granules = (shared_bytes + kGranule - 1) / kGranule;
  state_.assign(granules, kSettled);
  barrier_.assign(granules, 0);
  source_.assign(granules, 0);
  epoch_.assign(granules, 0);
  landings_.clear();
  readers_.assign(granules, {});
  read_granules_.clear();
  snapshots_.clear();
  clocks_ = &clocks;
  threads_ = threads;
  unsettled_ = 0;
}

std::string TmaShadow::issued(uint32_t thread, std::size_t offset, std::size_t bytes,
                              std::size_t barrier, std::vector<uint32_t>& granules) {
  const std::size_t first = offset / kGranule, end = (offset + bytes + kGranule - 1) / kGranule;
  for (std::size_t g = first; g < end; ++g) {
    if (state_[g] == kInFlight) {
      return "a TMA copy into shared offset " + std::to_string(g * kGranule) +
             " while another one into it (on the mbarrier at shared offset " +
             std::to_string(barrier_[g]) + ") is in flight";
    }
  }
  const std::string why =
      overwrite_hazard(offset, static_cast<uint32_t>(bytes), thread, "a TMA copy");
  if (!why.empty()) return why;
  for (std::size_t g = first; g < end; ++g) {
    if (state_[g] == kSettled) ++unsettled_;
    state_[g] = kInFlight;
    barrier_[g] = static_cast<uint32_t>(barrier);
    granules.push_back(static_cast<uint32_t>(g));
  }
  return "";
}

void TmaShadow::landed(const std::vector<uint32_t>& granules, uint32_t source, uint32_t epoch) {
  for (const uint32_t g : granules) {
    state_[g] = kLanded;
    source_[g] = source;
    epoch_[g] = epoch;
  }
  landings_.push_back({source, epoch, granules});
}

void TmaShadow::settle(uint32_t g) {
  if (state_[g] == kSettled) return;
  state_[g] = kSettled;
  --unsettled_;
}

std::string TmaShadow::overwrite_hazard(std::size_t offset, uint32_t width, uint32_t thread,
                                        const char* what) {
  const std::size_t first = offset / kGranule, end = (offset + width + kGranule - 1) / kGranule;
  for (std::size_t g = first; g < end; ++g) {
    for (const Read& r : readers_[g]) {
      if (ordered_after_read(thread, r)) continue;
      return std::string(what) + " into shared offset " + std::to_string(g * kGranule) + " that " +
             reader_name(r) +
             " read, and the issuing thread is not ordered after that read (no block barrier "
             "since, and no mbarrier phase that thread arrived on after reading was waited for "
             "before the copy): the copy may land before the read";
    }
  }
  for (std::size_t g = first; g < end; ++g) readers_[g].clear();
  return "";
}

std::string TmaShadow::store_hazard(std::size_t offset, uint32_t width, uint32_t thread) const {
  const std::size_t first = offset / kGranule, end = (offset + width + kGranule - 1) / kGranule;
  for (std::size_t g = first; g < end; ++g) {
    for (const Read& r : readers_[g]) {
      if (r.snapshot == kThreadRead || ordered_after_read(thread, r)) continue;
      return "a store into shared offset " + std::to_string(g * kGranule) + " that " +
             reader_name(r) +
             " read, and the storing thread is not ordered after that read (no block barrier "
             "since, and no mbarrier phase a thread of that warpgroup arrived on after its "
             "wgmma_wait was waited for before the store): on the GPU the warpgroups run at "
             "once, so the store may land before the wgmmas read";
    }
  }
  return "";
}

std::string TmaShadow::reader_name(const Read& r) const {
  if (r.snapshot == kThreadRead) return "thread " + std::to_string(r.thread);
  return "the wgmmas of warpgroup " + std::to_string(r.thread / snapshots_[r.snapshot].size()) +
         " (retired by its wgmma_wait)";
}

void TmaShadow::read_by(std::size_t offset, uint32_t width, uint32_t thread) {
  if (!clocks_->on()) return;
  record(offset, width, {thread, clocks_->epoch(thread), kThreadRead});
}

uint32_t TmaShadow::group_snapshot(std::vector<uint32_t> epochs) {
  snapshots_.push_back(std::move(epochs));
  return static_cast<uint32_t>(snapshots_.size() - 1);
}

void TmaShadow::group_read_by(std::size_t offset, uint32_t width, uint32_t first,
                              uint32_t snapshot) {
  record(offset, width, {first, 0, snapshot});
}

// One read per thread and per warpgroup a granule: the latest, which a
// copy ordered after it is ordered after the earlier ones too.
void TmaShadow::record(std::size_t offset, uint32_t width, Read read) {
  for (std::size_t g = offset / kGranule; g < (offset + width + kGranule - 1) / kGranule; ++g) {
    std::vector<Read>& readers = readers_[g];
    if (readers.empty()) read_granules_.push_back(static_cast<uint32_t>(g));
    const auto same = [&read](const Read& r) {
      return r.thread == read.thread &&
             (r.snapshot == kThreadRead) == (read.snapshot == kThreadRead);
    };
    const auto at = std::find_if(readers.begin(), readers.end(), same);
    if (at == readers.end()) {
      readers.push_back(read);
    } else {
      *at = read;
    }
  }
}

bool TmaShadow::ordered_after_read(uint32_t thread, const Read& r) const {
  if (r.snapshot == kThreadRead) {
    return r.thread == thread || clocks_->ordered_after(thread, r.thread, r.epoch);
  }
  const std::vector<uint32_t>& epochs = snapshots_[r.snapshot];
  if (thread >= r.thread && thread < r.thread + epochs.size()) return true;  // its own wait
  for (std::size_t t = 0; t < epochs.size(); ++t) {
    if (clocks_->ordered_after(thread, r.thread + static_cast<uint32_t>(t), epochs[t])) return true;
  }
  return false;
}

void TmaShadow::barrier() {
  // Every read is ordered before every thread's next copy.
  for (const uint32_t g : read_granules_) readers_[g].clear();
  read_granules_.clear();
  snapshots_.clear();
  // A landing some thread is ordered after is, past the barrier, seen by
  // all; one no thread waited for stays unseen (the barrier orders no
  // thread after the TMA).
  const auto seen = [this](const Landing& l) {
    for (uint32_t t = 0; t < threads_; ++t) {
      if (!clocks_->ordered_after(t, l.source, l.epoch)) continue;
      for (const uint32_t g : l.granules) {
        if (state_[g] == kLanded && source_[g] == l.source && epoch_[g] == l.epoch) settle(g);
      }
      return true;
    }
    return false;
  };
  landings_.erase(std::remove_if(landings_.begin(), landings_.end(), seen), landings_.end());
}

std::string TmaShadow::hazard(uint32_t g, uint32_t thread, const char* what) const {
  const std::string of = std::string(what) + " shared offset " + std::to_string(g * kGranule) +
                         ", which a TMA copy on the mbarrier at shared offset " +
                         std::to_string(barrier_[g]) + " writes,";
  if (state_[g] == kInFlight) {
    return of +
           " before the phase counting that copy's bytes completed (no wait can have seen it: "
           "the copy may not have landed)";
  }
  return of + " and thread " + std::to_string(thread) +
         " is not ordered after the phase it landed in (it did not wait on that phase, nor on "
         "one a waiter on it arrived on since, and no barrier followed such a wait)";
}

std::string TmaShadow::first_hazard(std::size_t offset, uint32_t width, uint32_t first,
                                    uint32_t count, const char* what) const {
  for (std::size_t g = offset / kGranule; g < (offset + width + kGranule - 1) / kGranule; ++g) {
    if (state_[g] == kSettled) continue;
    const auto granule = static_cast<uint32_t>(g);
    if (state_[g] == kInFlight) return hazard(granule, first, what);
    for (uint32_t t = first; t < first + count; ++t) {
      if (!sees(t, granule)) return hazard(granule, t, what);
    }
  }
  return "";
}

std::string TmaShadow::read_hazard(std::size_t offset, uint32_t width, uint32_t thread) const {
  return first_hazard(offset, width, thread, 1, "a read of");
}

std::string TmaShadow::write_hazard(std::size_t offset, uint32_t width, uint32_t thread) {
  std::string why = first_hazard(offset, width, thread, 1, "a write of");
  if (!why.empty()) return why;
  // Written over by a thread ordered after the copy: the generic write's now.
  for (std::size_t g = offset / kGranule; g < (offset + width + kGranule - 1) / kGranule; ++g) {
    settle(static_cast<uint32_t>(g));
  }
  return "";
}

std::string TmaShadow::group_hazard(std::size_t offset, uint32_t width, uint32_t first,
                                    uint32_t count) const {
  return first_hazard(offset, width, first, count, "a wgmma read of");
}

void Scope::check_race(std::size_t offset, uint32_t width, Op op) {
  SharedRaceShadow& shadow = *order_->race;
  const std::string race = op == Op::load ? shadow.read(offset, width, order_->linear_thread)
                                          : shadow.write(offset, width, order_->linear_thread);
  if (!race.empty()) fail_order(shared_.begin + offset, width, op, race);
}

void Scope::check_remote(uintptr_t a, uint32_t width, Op op, Space space) {
  const auto owner = static_cast<uint32_t>(cluster_->rank_of(a));
  Region peer;
  peer.base = peer.begin = cluster_->base(owner);
  peer.bytes = cluster_->shared_bytes();
  peer.end = peer.base + peer.bytes;
  peer.label = "shared memory of block " + dims(&cluster_->block(owner)) + ", the cluster's rank " +
               std::to_string(owner);
  std::string problem;
  if (a % width != 0) {
    problem = "misaligned (the address of a " + std::to_string(width) +
              "-byte access is a multiple of " + std::to_string(width) + ")";
  } else if (a + width > peer.end) {
    problem = "out of bounds";
  } else if (space != Space::generic) {
    problem = "in another block's shared memory, which only generic loads reach";
  } else if (op != Op::load) {
    problem =
        "a write to another block's shared memory, which the host executor does not emulate "
        "(distributed shared memory is read here, not written)";
  } else {
    problem = cluster_->read_remote(cluster_rank_, owner, a - peer.base, width);
  }
  if (!problem.empty()) fail(a, width, op, problem, &peer, a + width <= peer.end);
}

void Scope::check_cluster_write(std::size_t offset, uint32_t width, Op op) {
  const std::string race = cluster_->written(cluster_rank_, offset, width);
  if (!race.empty()) fail_order(shared_.begin + offset, width, op, race);
}

void ClusterShadow::reset(const std::vector<Dim3>& blocks, std::size_t shared_bytes) {
  const std::size_t granules = (shared_bytes + kGranule - 1) / kGranule;
  blocks_.resize(blocks.size());
  for (std::size_t r = 0; r < blocks.size(); ++r) {
    Block& b = blocks_[r];
    b.index = blocks[r];
    b.base = 0;
    b.written.assign(granules, 0);
    b.read.assign(granules, 0);
    b.reader.assign(granules, 0);
    b.gone = b.read_in = 0;
    b.last_reader = 0;
  }
  bytes_ = shared_bytes;
  phase_ = 1;
}

void ClusterShadow::place(uint32_t rank, const unsigned char* shared) {
  const auto base = reinterpret_cast<uintptr_t>(shared);
  blocks_[rank].base = base;
  lowest_ = rank == 0 || base < lowest_ ? base : lowest_;
  highest_end_ = rank == 0 || base + bytes_ > highest_end_ ? base + bytes_ : highest_end_;
}

int ClusterShadow::rank_of(uintptr_t a) const {
  if (a < lowest_ || a >= highest_end_) return -1;  // every global access: one compare, no scan
  for (std::size_t r = 0; r < blocks_.size(); ++r) {
    if (a >= blocks_[r].base && a < blocks_[r].base + bytes_) return static_cast<int>(r);
  }
  return -1;
}

std::string ClusterShadow::who(uint32_t rank) const {
  return "block " + dims(&blocks_[rank].index) + " (the cluster's rank " + std::to_string(rank) +
         ")";
}

std::string ClusterShadow::written(uint32_t rank, std::size_t offset, std::size_t width) {
  Block& b = blocks_[rank];
  for (std::size_t g = offset / kGranule; g <= (offset + width - 1) / kGranule; ++g) {
    if (b.read[g] == phase_) {
      return "a write over shared bytes " + who(b.reader[g]) +
             " read since the last cluster_sync() (barrier.cluster orders that read before "
             "this write; without it the reader may see the new bytes)";
    }
    b.written[g] = phase_;
  }
  return "";
}

std::string ClusterShadow::read_remote(uint32_t reader, uint32_t owner, std::size_t offset,
                                       uint32_t width) {
  Block& b = blocks_[owner];
  if (b.gone) {
    return "a read of the shared memory of " + who(owner) +
           ", which has exited (a block's shared memory is gone with it: a cluster_sync() after "
           "the last read keeps it)";
  }
  for (std::size_t g = offset / kGranule; g <= (offset + width - 1) / kGranule; ++g) {
    if (b.written[g] == phase_) {
      return "a read of shared bytes " + who(owner) +
             " wrote since the last cluster_sync() (barrier.cluster orders that write before "
             "this read; without it the read may see the old bytes)";
    }
    b.read[g] = phase_;
    b.reader[g] = static_cast<uint8_t>(reader);
  }
  b.read_in = phase_;
  b.last_reader = static_cast<uint8_t>(reader);
  return "";
}

std::string ClusterShadow::exited(uint32_t rank) {
  Block& b = blocks_[rank];
  b.gone = phase_;
  if (b.read_in != phase_) return "";
  return who(rank) + " exits while " + who(b.last_reader) +
         " may still read its shared memory (it read some since the last cluster_sync(); a "
         "cluster_sync() after the reads, before the exit, keeps the memory until they are done)";
}

void SharedRaceShadow::reset(std::size_t shared_bytes, uint32_t threads,
                             const ReleaseClocks& clocks) {
  // Threads are 16-bit in the records: run_grid_on_host refuses a block of more than 1024.
  if (cells_.size() < shared_bytes) cells_.resize(shared_bytes);
  syncs_.assign((threads + 31) / 32, 0);
  clocks_ = &clocks;
  barrier();
}

void SharedRaceShadow::barrier() {
  if (++generation_ == 0) {  // wrapped: no stale record may match the new generation
    std::fill(cells_.begin(), cells_.end(), Cell{});
    generation_ = 1;
  }
}

SharedRaceShadow::Access SharedRaceShadow::stamp(uint32_t thread) const {
  Access a;
  a.thread_plus_1 = static_cast<uint16_t>(thread + 1);
  a.latest = static_cast<uint16_t>(thread);
  a.epoch = clocks_->epoch(thread);
  a.sync = syncs_[thread / 32];
  return a;
}

bool SharedRaceShadow::warp_synced_since(uint32_t thread, uint32_t by, uint32_t sync) const {
  return by / 32 == thread / 32 && syncs_[thread / 32] > sync;
}

bool SharedRaceShadow::ordered_after(uint32_t thread, uint32_t by, const Access& a) const {
  return by == thread || warp_synced_since(thread, by, a.sync) ||
         clocks_->ordered_after(thread, by, a.epoch);
}

// Reads of one warp (its first reader, and the latest read's thread and
// stamps): a sync_warp of that warp after the latest orders every lane's
// read before the writer's (each lane read before it arrived); mbarrier
// clocks are checked against the latest read only (the other lanes'
// epochs are not kept: a race with them may pass, none is made up).
bool SharedRaceShadow::ordered_after_reads(uint32_t thread, const Access& r) const {
  const uint32_t first = r.thread_plus_1 - 1u;
  if (!r.several) return ordered_after(thread, first, r);
  if (warp_synced_since(thread, first, r.sync)) return true;
  if (!clocks_->on()) return false;
  return r.latest == thread || clocks_->ordered_after(thread, r.latest, r.epoch);
}

SharedRaceShadow::Cell& SharedRaceShadow::cell(std::size_t offset) {
  Cell& c = cells_[offset];
  if (c.generation != generation_) c = Cell{generation_, {}, {}};
  return c;
}

std::string SharedRaceShadow::race(const char* kind, std::size_t offset, uint32_t thread,
                                   const std::string& other_did) const {
  return std::string("a race on shared offset ") + std::to_string(offset) + " (" + kind +
         "): " + other_did + " it, and thread " + std::to_string(thread) +
         " is not ordered after that (no block barrier since, no sync_warp of a warp they share, "
         "no mbarrier phase that thread arrived on after it and this one waited for): on the GPU "
         "the two may meet in either order";
}

std::string SharedRaceShadow::after_write(const Cell& c, std::size_t at, uint32_t thread,
                                          const char* kind) const {
  if (c.write.thread_plus_1 == kNone) return "";
  const uint32_t writer = c.write.thread_plus_1 - 1u;
  return ordered_after(thread, writer, c.write)
             ? ""
             : race(kind, at, thread, "thread " + std::to_string(writer) + " wrote");
}

std::string SharedRaceShadow::read(std::size_t offset, uint32_t width, uint32_t thread) {
  const Access now = stamp(thread);
  for (std::size_t at = offset; at < offset + width; ++at) {
    Cell& c = cell(at);
    std::string why = after_write(c, at, thread, "read after write");
    if (!why.empty()) return why;
    for (Access& r : c.reads) {
      if (r.thread_plus_1 == kNone) {
        r = now;
        break;
      }
      if ((r.thread_plus_1 - 1u) / 32 != thread / 32) continue;
      r.several = r.several || r.thread_plus_1 != now.thread_plus_1;
      r.latest = now.latest;
      r.epoch = now.epoch;
      r.sync = now.sync;
      break;
    }
  }
  return "";
}

std::string SharedRaceShadow::write(std::size_t offset, uint32_t width, uint32_t thread) {
  for (std::size_t at = offset; at < offset + width; ++at) {
    const Cell& c = cell(at);
    std::string why = after_write(c, at, thread, "write after write");
    if (!why.empty()) return why;
    for (const Access& r : c.reads) {
      if (r.thread_plus_1 == kNone) break;
      if (ordered_after_reads(thread, r)) continue;
      // A reader other than this thread: the latest, the first, or its warp's lanes.
      const uint32_t first = r.thread_plus_1 - 1u;
      const uint32_t reader = r.latest != thread ? r.latest : first;
      return race("write after read", at, thread,
                  reader != thread ? "thread " + std::to_string(reader) + " read"
                                   : "other lanes of warp " + std::to_string(first / 32) + " read");
    }
  }
  const Access now = stamp(thread);
  for (std::size_t at = offset; at < offset + width; ++at) {
    Cell& c = cells_[at];
    c.write = now;
    c.reads[0] = c.reads[1] = Access{};
  }
  return "";
}

std::string SharedRaceShadow::copied_over(std::size_t offset, std::size_t bytes, uint32_t thread) {
  for (std::size_t at = offset; at < offset + bytes; ++at) {
    std::string why = after_write(cell(at), at, thread, "a TMA copy after a write");
    if (!why.empty()) return why;
  }
  for (std::size_t at = offset; at < offset + bytes; ++at) cells_[at] = Cell{generation_, {}, {}};
  return "";
}

void ReleaseClocks::reset(uint32_t threads) {
  threads_ = width_ = threads;
  clock_.clear();
  source_epoch_.clear();
}

void ReleaseClocks::start() {
  if (on()) return;
  clock_.assign(std::size_t{threads_} * width_, 0);
  for (uint32_t t = 0; t < threads_; ++t) at(t, t) = 1;
}

uint32_t ReleaseClocks::add_source() {
  std::vector<uint32_t> wider(std::size_t{threads_} * (width_ + 1), 0);
  for (uint32_t t = 0; t < threads_; ++t) {
    std::copy_n(clock_.begin() + std::size_t{t} * width_, width_,
                wider.begin() + std::size_t{t} * (width_ + 1));
  }
  clock_ = std::move(wider);
  source_epoch_.push_back(1);
  return width_++;
}

uint32_t ReleaseClocks::release_source(uint32_t source, std::vector<uint32_t>& phase) {
  phase.resize(width_, 0);
  const uint32_t landed = source_epoch_[source - threads_]++;
  phase[source] = std::max(phase[source], landed);
  return landed;
}

void ReleaseClocks::release(uint32_t t, std::vector<uint32_t>& phase) {
  phase.resize(width_, 0);
  for (uint32_t of = 0; of < width_; ++of) phase[of] = std::max(phase[of], at(t, of));
  ++at(t, t);
}

void ReleaseClocks::acquire(uint32_t t, const std::vector<uint32_t>& phase) {
  for (uint32_t of = 0; of < phase.size(); ++of) at(t, of) = std::max(at(t, of), phase[of]);
}

void ReleaseClocks::join(uint32_t first, uint32_t count) {
  if (!on()) return;
  const uint32_t end = std::min(threads_, first + count);
  for (uint32_t of = 0; of < width_; ++of) {
    uint32_t most = 0;
    for (uint32_t t = first; t < end; ++t) most = std::max(most, at(t, of));
    for (uint32_t t = first; t < end; ++t) at(t, of) = most;
  }
  // The barrier released each thread's epoch to the others: what a thread
  // lands after it is of its next epoch.
  for (uint32_t t = first; t < end; ++t) ++at(t, t);
}

void CpAsyncShadow::reset(std::size_t shared_bytes, uint32_t threads, const ReleaseClocks& clocks) {
  const std::size_t granules = (shared_bytes + kGranule - 1) / kGranule;
  state_.assign(granules, kSettled);
  owner_.assign(granules, 0);
  serial_.assign(granules, 0);
  landed_epoch_.assign(granules, 0);
  clocks_ = &clocks;
  handed_over_ = 0;
  groups_.assign(threads, {});
  open_.assign(threads, {});
  landed_.assign((threads + 31) / 32, {});
  synced_generation_.assign(landed_.size(), ~uint64_t{0});
  warp_visible_.clear();
  next_serial_ = 0;
  unsettled_ = 0;
}

void CpAsyncShadow::issued(std::size_t offset, uint32_t width, uint32_t thread) {
  for (std::size_t g = offset / kGranule; g < (offset + width + kGranule - 1) / kGranule; ++g) {
    if (state_[g] == kSettled) ++unsettled_;
    if (state_[g] == kHandedOver) --handed_over_;
    state_[g] = kInFlight;
    owner_[g] = thread;
    serial_[g] = ++next_serial_;
    open_[thread].push_back({static_cast<uint32_t>(g), serial_[g]});
  }
}

void CpAsyncShadow::committed(uint32_t thread) {
  groups_[thread].push_back(std::move(open_[thread]));
  open_[thread].clear();
}

void CpAsyncShadow::waited(uint32_t thread, uint32_t pending) {
  auto& groups = groups_[thread];
  while (groups.size() > pending) {
    for (const Copy& c : groups.front()) {
      if (state_[c.granule] == kInFlight && serial_[c.granule] == c.serial) {
        state_[c.granule] = kLanded;
        landed_epoch_[c.granule] = clocks_->epoch(thread);
        landed_[thread / 32].push_back(c.granule);
      }
    }
    groups.erase(groups.begin());
  }
}

void CpAsyncShadow::landed_all(uint32_t thread) {
  committed(thread);
  waited(thread, 0);
}

void CpAsyncShadow::warp_synced(uint32_t warp, uint64_t generation) {
  if (synced_generation_[warp] == generation) return;
  synced_generation_[warp] = generation;
  for (const uint32_t g : landed_[warp]) {
    if (state_[g] == kLanded && owner_[g] / 32 == warp) {
      state_[g] = kWarpVisible;
      warp_visible_.push_back(g);
    }
  }
  landed_[warp].clear();
}

void CpAsyncShadow::barrier() {
  const auto settle = [this](uint32_t g) {
    if (state_[g] == kLanded || state_[g] == kWarpVisible) {
      state_[g] = kSettled;
      --unsettled_;
    }
  };
  for (auto& warp : landed_) {
    for (const uint32_t g : warp) settle(g);
    warp.clear();
  }
  for (const uint32_t g : warp_visible_) settle(g);
  warp_visible_.clear();
  if (handed_over_ == 0) return;
  for (uint8_t& state : state_) {
    if (state == kHandedOver) {
      state = kSettled;
      --unsettled_;
    }
  }
  handed_over_ = 0;
}

void CpAsyncShadow::released_by(const std::vector<bool>& arrived) {
  // Hands over the granules the arriving threads landed (read_hazard then
  // asks the reader's clock); keeps the others that still wait for a
  // barrier, drops the stale (settled or in flight again).
  const auto done = [&](uint32_t g) {
    if (state_[g] != kLanded && state_[g] != kWarpVisible) return true;
    if (!arrived[owner_[g]]) return false;
    state_[g] = kHandedOver;
    ++handed_over_;
    return true;
  };
  for (auto& warp : landed_) warp.erase(std::remove_if(warp.begin(), warp.end(), done), warp.end());
  warp_visible_.erase(std::remove_if(warp_visible_.begin(), warp_visible_.end(), done),
                      warp_visible_.end());
}

std::string CpAsyncShadow::read_hazard(std::size_t offset, uint32_t width, uint32_t thread) const {
  for (std::size_t g = offset / kGranule; g < (offset + width + kGranule - 1) / kGranule; ++g) {
    const uint8_t state = state_[g];
    const bool in_flight = state == kInFlight;
    const bool unseen = (state == kLanded && owner_[g] != thread) ||
                        (state == kWarpVisible && owner_[g] / 32 != thread / 32) ||
                        (state == kHandedOver && owner_[g] != thread &&
                         !clocks_->ordered_after(thread, owner_[g], landed_epoch_[g]));
    if (!in_flight && !unseen) continue;  // the common case: no message built
    const std::string by = "a read of thread " + std::to_string(owner_[g]) +
                           "'s cp.async into shared offset " + std::to_string(g * kGranule);
    if (in_flight) {
      return by +
             ", still in flight: no cp_async_wait of that thread has retired its group (the "
             "GPU may not have landed it yet)";
    }
    if (state == kHandedOver) {
      return by +
             ", handed over by an mbarrier phase that this thread is not ordered after (it "
             "did not wait on that phase, nor on one that a waiter on it arrived on since, "
             "and no barrier followed: only the threads ordered after a phase see what it "
             "hands over)";
    }
    if (state == kLanded) {
      return by +
             ", with no barrier since the wait that retired it (another thread sees a cp.async "
             "only after a barrier that follows its wait: sync_warp within its warp, "
             "sync_threads across the block)";
    }
    return by +
           ", from another warp with only a sync_warp of the writer's warp since the wait "
           "that retired it (across warps a cp.async is seen after a block barrier)";
  }
  return "";
}

std::string CpAsyncShadow::write_hazard(std::size_t offset, uint32_t width) const {
  for (std::size_t g = offset / kGranule; g < (offset + width + kGranule - 1) / kGranule; ++g) {
    if (state_[g] == kInFlight) {
      return "a write into shared offset " + std::to_string(g * kGranule) +
             ", the destination of thread " + std::to_string(owner_[g]) +
             "'s cp.async still in flight (it may land after this write and overwrite it)";
    }
  }
  return "";
}

void AsyncProxyShadow::reset(std::size_t shared_bytes, uint32_t threads,
                             const ReleaseClocks& clocks) {
  state_.assign((shared_bytes + 15) / 16, kVisible);
  writer_.assign(state_.size(), 0);
  write_epoch_.assign(state_.size(), 0);
  fences_.assign(state_.size(), {});
  unfenced_.assign(threads, {});
  awaiting_barrier_.clear();
  awaiting_fence_.clear();
  clocks_ = &clocks;
}

void AsyncProxyShadow::written(std::size_t offset, uint32_t width, uint32_t thread) {
  for (std::size_t g = offset / 16; g <= (offset + width - 1) / 16 && g < state_.size(); ++g) {
    // A granule already waiting in this thread's list needs no second entry.
    if (state_[g] != kWritten || writer_[g] != thread)
      unfenced_[thread].push_back(static_cast<uint32_t>(g));
    state_[g] = kWritten;
    writer_[g] = thread;
    write_epoch_[g] = clocks_->epoch(thread);
    fences_[g].clear();
  }
}

void AsyncProxyShadow::add_fencer(uint32_t g, uint32_t thread) {
  if (state_[g] != kFenced) awaiting_barrier_.push_back(g);
  state_[g] = kFenced;
  for (const Fence& f : fences_[g]) {
    if (f.thread == thread) return;  // its later fence covers no more readers than its first
  }
  fences_[g].push_back({thread, clocks_->epoch(thread)});
}

void AsyncProxyShadow::fenced(uint32_t thread) {
  for (const uint32_t g : unfenced_[thread]) {
    if (state_[g] == kWritten && writer_[g] == thread) add_fencer(g, thread);
  }
  unfenced_[thread].clear();
  // Writes mbarrier phases handed over unfenced: covered by this fence if
  // this thread is ordered after them (it waited on the phase, or on one
  // after it, or met a thread that did at a sync_warp). They stay listed
  // for other threads' fences until a block barrier, or until written
  // again (then dropped here, so that a pipeline with no block barrier in
  // its loop keeps only its live stages listed).
  const auto written_again = [&](uint32_t g) {
    return state_[g] != kReleased && state_[g] != kFenced;
  };
  awaiting_fence_.erase(
      std::remove_if(awaiting_fence_.begin(), awaiting_fence_.end(), written_again),
      awaiting_fence_.end());
  for (const uint32_t g : awaiting_fence_) {
    if (clocks_->ordered_after(thread, writer_[g], write_epoch_[g])) add_fencer(g, thread);
  }
}

void AsyncProxyShadow::barrier() {
  for (const uint32_t g : awaiting_barrier_) {
    if (state_[g] == kFenced) {
      state_[g] = kVisible;
      fences_[g].clear();
    }
  }
  awaiting_barrier_.clear();
  // What completed phases handed over unfenced is now ordered before every
  // thread: any thread's fence covers it.
  std::vector<uint32_t> still;
  for (const uint32_t g : awaiting_fence_) {
    if (state_[g] == kReleased) {
      write_epoch_[g] = 0;
      still.push_back(g);
    }
  }
  awaiting_fence_ = std::move(still);
}

void AsyncProxyShadow::released_by(const std::vector<bool>& arrived) {
  for (uint32_t t = 0; t < arrived.size(); ++t) {
    if (!arrived[t]) continue;
    for (const uint32_t g : unfenced_[t]) {
      if (state_[g] == kWritten && writer_[g] == t) {
        state_[g] = kReleased;
        awaiting_fence_.push_back(g);
      }
    }
    unfenced_[t].clear();
  }
}

AsyncProxyShadow::Pending AsyncProxyShadow::pending_for(std::size_t offset, std::size_t bytes,
                                                        uint32_t first_reader,
                                                        uint32_t readers) const {
  for (std::size_t g = offset / 16; g <= (offset + bytes - 1) / 16 && g < state_.size(); ++g) {
    if (state_[g] == kVisible) continue;
    Pending p{writer_[g] + 1, state_[g] == kFenced, state_[g] == kReleased, 0, 0, g * 16};
    if (state_[g] != kFenced) return p;
    const auto after_a_fence = [&](uint32_t r) {
      return std::any_of(fences_[g].begin(), fences_[g].end(), [&](const Fence& f) {
        return clocks_->ordered_after(r, f.thread, f.epoch);
      });
    };
    for (uint32_t r = first_reader; r < first_reader + readers; ++r) {
      if (after_a_fence(r)) continue;
      p.reader = r;
      p.fencer = fences_[g].front().thread;
      return p;
    }
  }
  return {};
}

}  // namespace memcheck
}  // namespace nvh
