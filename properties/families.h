// The case families: one per branch of the dispatcher the seed's blind spot
// teaches us to aim at (every test had M <= 8, so the prefill dequant never ran).
// Each family lists its explicit boundary examples, run first, then draws
// random cases from a RapidCheck generator, and states which routes it must
// reach and in what share of its random cases, so a generator that drifts off
// its branch fails instead of silently testing something else.
#pragma once

#include <rapidcheck.h>

#include <string>
#include <vector>

#include "kernels/nvfp4_types.h"
#include "properties/matmul_case.h"

namespace nvfp4 {

struct RouteTarget {
  std::vector<Route> routes;  // reaching any of these counts
  double min_share;           // of the family's random cases
};

struct Family {
  std::string name;
  std::string aim;                 // one line: the branch it reaches
  std::vector<CaseSpec> examples;  // boundary cases, run first
  rc::Gen<CaseSpec> random;        // random cases (shrink towards small shapes)
  std::vector<RouteTarget> targets;
};

const std::vector<Family>& all_families();
const Family* find_family(const std::string& name);

// Draws `count` random cases of a family, reproducibly from `seed`.
std::vector<CaseSpec> sample_family(const Family& family, int count, uint64_t seed);

// Share of `routes` among the routes taken; "" when every target holds, else
// what fell short.
std::string check_targets(const Family& family, const std::vector<Route>& taken);

}  // namespace nvfp4

namespace nvfp4 {
// How RapidCheck prints a counterexample (found by ADL): the case's name, its identity.
inline void showValue(const CaseSpec& spec, std::ostream& os) { os << spec.name(); }
}  // namespace nvfp4
