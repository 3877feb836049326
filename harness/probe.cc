#include "harness/probe.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <utility>

#include "harness/probe_counts.h"

namespace nvh {
namespace probe {
namespace {

// Function-local statics: sites register during static initialisation, in
// whatever order the translation units run it.
struct Registry {
  std::mutex mutex;
  std::set<uint32_t> slots;
  std::vector<std::pair<DeviceBankReader, DeviceBankResetter>> banks;
};

Registry& registry() {
  static Registry r;
  return r;
}

SiteCount site_at(uint32_t slot, uint64_t taken, uint64_t not_taken) {
  return SiteCount{bank_of(slot), file_of(slot), line_of(slot), taken, not_taken};
}

}  // namespace

// Defined whether or not this file was compiled with NVH_PROBES: the macro's
// mode is per translation unit (a test may switch it on for itself alone).
std::atomic<uint64_t> host_counts[2 * kSlots];

bool register_site(uint32_t slot) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.slots.insert(slot);
  return true;
}

bool register_device_bank(DeviceBankReader read, DeviceBankResetter reset) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.banks.emplace_back(read, reset);
  return true;
}

std::size_t device_bank_count() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.banks.size();
}

std::vector<SiteCount> registered_sites() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<SiteCount> out;
  for (uint32_t slot : r.slots) out.push_back(site_at(slot, 0, 0));
  return out;
}

std::vector<SiteCount> read_counts(Counters which) {
  std::vector<uint64_t> counts(2 * kSlots, 0);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (which == Counters::host) {
    for (uint32_t i = 0; i < 2 * kSlots; ++i)
      counts[i] = host_counts[i].load(std::memory_order_relaxed);
  } else {
    std::vector<unsigned long long> bank(2 * kSlots);
    for (const auto& b : r.banks) {
      std::fill(bank.begin(), bank.end(), 0ull);
      b.first(bank.data());
      for (uint32_t i = 0; i < 2 * kSlots; ++i) counts[i] += bank[i];
    }
  }
  std::vector<SiteCount> out;
  for (uint32_t slot = 0; slot < kSlots; ++slot) {
    const uint64_t taken = counts[2 * slot], not_taken = counts[2 * slot + 1];
    if (taken + not_taken > 0 || r.slots.count(slot))
      out.push_back(site_at(slot, taken, not_taken));
  }
  return out;
}

void reset_counts() {
  for (auto& c : host_counts) c.store(0, std::memory_order_relaxed);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& b : r.banks) b.second();
}

}  // namespace probe
}  // namespace nvh
