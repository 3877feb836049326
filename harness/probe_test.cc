// The probe machinery on a toy kernel. This file switches probes on for
// itself, so the counting path is tested in every build, with or without
// NVFP4_DEVICE_PROBES.
#ifndef NVH_PROBES
#define NVH_PROBES 1
#endif

#include "harness/probe.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/host_executor.h"
#include "harness/probe_counts.h"

namespace nvh {
namespace {

// The toy operator's probes sit in bank 3, so their slots are apart from
// those of an operator in bank 0 with the same files.
constexpr uint32_t kToyBank = 3;
constexpr const char* kToyFiles[] = {"harness/no_such_file.cuh", "harness/probe_test.cc"};
#define TOY_PROBE(cond) NVH_PROBE_IN(kToyBank, kToyFiles, cond)

static_assert(probe::path_ends_with("/src/harness/probe_test.cc", "harness/probe_test.cc"));
static_assert(probe::path_ends_with("harness/probe_test.cc", "harness/probe_test.cc"));
static_assert(!probe::path_ends_with("/src/xharness/probe_test.cc", "harness/probe_test.cc"));
static_assert(!probe::path_ends_with("test.cc", "harness/probe_test.cc"));
static_assert(probe::slot_of(0, kToyFiles, "/x/harness/probe_test.cc", 7) == probe::kMaxLine + 7);
static_assert(probe::slot_of(kToyBank, kToyFiles, "/x/harness/probe_test.cc", 7) ==
              kToyBank * probe::kBankSlots + probe::kMaxLine + 7);
static_assert(probe::bank_of(probe::slot_of(kToyBank, kToyFiles, "/x/harness/probe_test.cc", 7)) ==
              kToyBank);
static_assert(probe::file_of(probe::slot_of(kToyBank, kToyFiles, "/x/harness/probe_test.cc", 7)) ==
              1);
static_assert(probe::slot_of(0, kToyFiles, "/x/harness/other.cc", 7) == probe::kNoSlot);
static_assert(probe::slot_of(0, kToyFiles, "/x/harness/probe_test.cc", probe::kMaxLine) ==
              probe::kNoSlot);
static_assert(probe::slot_of(probe::kMaxOperators, kToyFiles, "/x/harness/probe_test.cc", 7) ==
              probe::kNoSlot);

constexpr uint32_t kLaneSiteLine = __LINE__ + 12;
constexpr uint32_t kLoopSiteLine = __LINE__ + 12;
constexpr uint32_t kNeverSiteLine = __LINE__ + 16;

struct Toy {
  struct Params {
    uint32_t limit;
    uint32_t* out;  // one per thread
  };
  template <class Ctx>
  static void body(Ctx& ctx, const Params& p) {
    const uint32_t i = ctx.thread_idx().x;
    if (TOY_PROBE(i < p.limit)) p.out[i] = 1;
    for (uint32_t k = 0; TOY_PROBE(k < i % 3); ++k) p.out[i] += 1;
  }
};

// Compiled, never called: its site must still be reported (with zero counts).
[[maybe_unused]] bool never_called(int x) { return TOY_PROBE(x > 0); }

probe::SiteCount site(const std::vector<probe::SiteCount>& sites, uint32_t line) {
  const auto it = std::find_if(sites.begin(), sites.end(), [line](const probe::SiteCount& s) {
    return s.bank == kToyBank && s.file == 1 && s.line == line;
  });
  EXPECT_NE(it, sites.end()) << "no site at line " << line;
  return it == sites.end() ? probe::SiteCount{} : *it;
}

TEST(Probe, EveryCompiledSiteIsRegisteredEvenIfItNeverRuns) {
  const auto sites = probe::registered_sites();
  for (uint32_t line : {kLaneSiteLine, kLoopSiteLine, kNeverSiteLine}) site(sites, line);
}

TEST(Probe, CountsBothDirectionsOfEachSiteInTheHostExecutor) {
  probe::reset_counts();
  std::vector<uint32_t> out(64, 0);
  LaunchShape shape;
  shape.grid = {2, 1, 1};
  shape.block = {64, 1, 1};
  const Toy::Params params{40, out.data()};
  launch_on_host<Toy>(shape, params);

  const auto counts = probe::read_counts(probe::Counters::host);
  const probe::SiteCount lane = site(counts, kLaneSiteLine);
  EXPECT_EQ(lane.taken, 2u * 40);  // two blocks, threads 0..39 each
  EXPECT_EQ(lane.not_taken, 2u * 24);
  // Thread i iterates i % 3 times: over 0..63 that is 22 * 0 + 21 * 1 + 21 * 2 = 63
  // iterations and 64 exits per block.
  const probe::SiteCount loop = site(counts, kLoopSiteLine);
  EXPECT_EQ(loop.taken, 2u * 63);
  EXPECT_EQ(loop.not_taken, 2u * 64);
  const probe::SiteCount never = site(counts, kNeverSiteLine);
  EXPECT_EQ(never.taken + never.not_taken, 0u);

  probe::reset_counts();
  EXPECT_EQ(site(probe::read_counts(probe::Counters::host), kLaneSiteLine).taken, 0u);
}

TEST(Probe, DeviceCountersAreZeroWithoutAGpuRun) {
  probe::reset_counts();
  for (const probe::SiteCount& s : probe::read_counts(probe::Counters::device)) {
    EXPECT_EQ(s.taken + s.not_taken, 0u) << s.file << ":" << s.line;
  }
}

}  // namespace
}  // namespace nvh
