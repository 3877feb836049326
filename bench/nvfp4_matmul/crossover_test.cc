// The route table's crossover above M = 128 held to the run that measured it
// (results/h200-crossover-wtma.json, embedded by CMake): a change of
// prefill_fused_preferred, of the plan, or of its thresholds that the run
// does not back fails here until a new run is committed beside it.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bench/nvfp4_matmul/crossover_run.h"
#include "kernels/nvfp4_matmul/dispatch.h"

namespace nvfp4 {
namespace {

struct Measured {
  int64_t M, N, K;
  double fused_us, vec8_us;
  double ratio() const { return fused_us / vec8_us; }
  std::string name() const {
    return std::to_string(N) + "x" + std::to_string(K) + " at M = " + std::to_string(M);
  }
};

// The run's pairs of rows: prefill_fused and prefill_vec8, bias on, per shape and M.
std::vector<Measured> crossover_run() {
  if (kCrossoverRunCount != 1) throw std::logic_error("the crossover run was not embedded");
  const nlohmann::json run = nlohmann::json::parse(kCrossoverRun[0].text);
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::map<std::string, double>> by_problem;
  for (const auto& row : run.at("rows")) {
    const std::string name = row.at("name");
    for (const char* route : {"prefill_fused bias ", "prefill_vec8 bias "}) {
      if (name.rfind(route, 0) == 0) {
        by_problem[{row.at("M"), row.at("N"), row.at("K")}][route] = row.at("kernel_us");
      }
    }
  }
  std::vector<Measured> out;
  for (const auto& [problem, us] : by_problem) {
    if (us.size() != 2) continue;
    out.push_back({std::get<0>(problem), std::get<1>(problem), std::get<2>(problem),
                   us.at("prefill_fused bias "), us.at("prefill_vec8 bias ")});
  }
  return out;
}

Caps h200() {
  Caps c;
  c.sm = 90;
  c.wgmma = true;
  c.backend = "cuda";
  return c;
}

TEST(Crossover, TheRouteTableAgreesWithTheRunThatMeasuredIt) {
  const std::vector<Measured> run = crossover_run();
  ASSERT_EQ(run.size(), 24u * 9u) << "24 weight shapes at M = 129, 192, 256, 320, 384, 448, 512, "
                                     "768 and 1024";
  std::vector<std::string> slower_taken, faster_left;
  for (const Measured& m : run) {
    const bool fused = prefill_fused_preferred(m.M, m.N, m.K, h200());
    if (fused && m.ratio() >= 1.0) slower_taken.push_back(m.name());
    // Where the plan's rounds decide (M = 448, 512), vec8 is taken only
    // where prefill_fused is slower or within 1.1 % (4096 x 6144: 0.989).
    if (!fused && prefill_fused_rounds_decide(m.M, h200())) {
      EXPECT_GE(m.ratio(), 0.985) << m.name() << ": " << m.fused_us << " against " << m.vec8_us;
    } else if (!fused && m.ratio() < 1.0) {
      faster_left.push_back(m.name());
    }
  }
  // The one shape whose K is split over three rounds at M = 129 and 256
  // (12288 x 4096: 1.02 and 1.10) is the crossover's one measured loss.
  EXPECT_EQ(slower_taken,
            (std::vector<std::string>{"12288x4096 at M = 129", "12288x4096 at M = 256"}));
  // What the rule leaves elsewhere: 19 cases at M = 320, 384, 768 and 1024
  // where prefill_fused measured faster (best 0.877, 2048 x 16384 at 384);
  // no simple rule over the plan measured right there.
  EXPECT_EQ(faster_left.size(), 19u);
}

}  // namespace
}  // namespace nvfp4
