// The operator's branch probes (kernels/nvfp4_matmul/probes.h) against its sources: every
// NVFP4_PROBE sits in a listed file, one per line, and in a probe build every
// one of them is a registered site, so the tracefile lists it even where it
// never ran. In a build without probes none is registered (the macro is the
// bare condition).
#include "kernels/nvfp4_matmul/probes.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "harness/host_executor.h"
#include "harness/probe_counts.h"
#include "kernels/nvfp4_matmul/bias_round.cuh"
#include "kernels/nvfp4_matmul/kernel_sources.h"

namespace nvfp4 {
namespace {

using Site = std::pair<uint32_t, uint32_t>;  // file index, line

// Every NVFP4_PROBE( in kernels/nvfp4_matmul/*.cuh, by scanning the sources (their text
// as built, kernel_sources.h: the source tree may be elsewhere at run time).
std::set<Site> probes_in_sources(std::string* problems) {
  std::set<Site> sites;
  for (std::size_t f = 0; f < kKernelSourcesCount; ++f) {
    const std::string rel = kKernelSources[f].path;
    std::istringstream in(kKernelSources[f].text);
    std::string text;
    uint32_t line = 0;
    while (std::getline(in, text)) {
      ++line;
      const std::size_t first = text.find("NVFP4_PROBE(");
      if (first == std::string::npos) continue;
      if (text.find("NVFP4_PROBE(", first + 1) != std::string::npos)
        *problems += rel + ":" + std::to_string(line) + " has two probes\n";
      uint32_t index = kProbeFileCount;
      for (uint32_t i = 0; i < kProbeFileCount; ++i) {
        if (rel == kProbeFiles[i]) index = i;
      }
      if (index == kProbeFileCount) *problems += rel + " holds probes but is not in kProbeFiles\n";
      if (line >= nvh::probe::kMaxLine)
        *problems += rel + ":" + std::to_string(line) + " is past kMaxLine\n";
      sites.insert({index, line});
    }
  }
  return sites;
}

TEST(Probes, EverySourceProbeIsListedOncePerLine) {
  std::string problems;
  EXPECT_GT(probes_in_sources(&problems).size(), 40u);
  EXPECT_EQ(problems, "");
}

TEST(Probes, EverySourceProbeIsARegisteredSiteInAProbeBuild) {
  // The GPU-only kernels' host bodies, instantiated here as device_launch.cuh
  // does in a CUDA build, so that their sites register too.
  static_cast<void>(&nvh::launch_on_host<BiasRound>);
  std::set<Site> registered;
  for (const auto& s : nvh::probe::registered_sites()) {
    if (s.bank == kProbeBank) registered.insert({s.file, s.line});
  }
  if (!nvh::probe::enabled()) {
    EXPECT_TRUE(registered.empty())
        << "probes are off, yet " << registered.size() << " sites registered";
    GTEST_SKIP() << "built without NVFP4_DEVICE_PROBES: the macro is the bare condition";
  }
  std::string problems;
  const std::set<Site> in_sources = probes_in_sources(&problems);
  for (const Site& s : in_sources) {
    EXPECT_TRUE(registered.count(s))
        << kProbeFiles[s.first] << ":" << s.second << " is not registered";
  }
  for (const Site& s : registered) {
    EXPECT_TRUE(in_sources.count(s))
        << "registered site " << s.first << ":" << s.second << " has no probe in the sources";
  }
}

}  // namespace
}  // namespace nvfp4
