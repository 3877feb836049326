// The case families: one per branch of the dispatcher the seed's blind spot
// teaches us to aim at (every test had M <= 8, so the prefill dequant never ran).
// Each family lists its explicit boundary examples, run first, then draws
// random cases from a RapidCheck generator, and states which routes it must
// reach and in what share of its random cases, so a generator that drifts off
// its branch fails instead of silently testing something else.
#pragma once

#include <rapidcheck.h>

#include <string>
#include <utility>
#include <vector>

#include "kernels/nvfp4_types.h"
#include "properties/matmul_case.h"

namespace nvfp4 {

struct RouteTarget {
  std::vector<Route> routes;  // reaching any of these counts
  double min_share;           // of the family's random cases
};

// A value class (value_class.h) that every one of `routes` must have run:
// some case of the family drew the class and the route ran it (natural or
// forced) and checked its output.
struct ClassTarget {
  ValueClass value_class;
  std::vector<Route> routes;
};

struct Family {
  // A constructor rather than aggregate initialization, so families that
  // set no class targets need not name them.
  Family(std::string name_, std::string aim_, std::vector<CaseSpec> examples_, rc::Gen<CaseSpec> random_,
         std::vector<RouteTarget> targets_, std::vector<ClassTarget> class_targets_ = {})
      : name(std::move(name_)),
        aim(std::move(aim_)),
        examples(std::move(examples_)),
        random(std::move(random_)),
        targets(std::move(targets_)),
        class_targets(std::move(class_targets_)) {}

  std::string name;
  std::string aim;                 // one line: the branch it reaches
  std::vector<CaseSpec> examples;  // boundary cases, run first
  rc::Gen<CaseSpec> random;        // random cases (shrink towards small shapes)
  std::vector<RouteTarget> targets;
  std::vector<ClassTarget> class_targets;  // over examples and random cases; empty for most families
};

const std::vector<Family>& all_families();
const Family* find_family(const std::string& name);

// Draws `count` random cases of a family, reproducibly from `seed`.
std::vector<CaseSpec> sample_family(const Family& family, int count, uint64_t seed);

// Share of `routes` among the routes taken; "" when every target holds, else
// what fell short.
std::string check_targets(const Family& family, const std::vector<Route>& taken);

// One case that passed: its value class and the routes that ran it
// (CaseVerdict::routes_run).
struct ClassRun {
  ValueClass value_class;
  std::vector<Route> routes;
};
// "" when every class target was reached by the passing cases in `runs`,
// else each (class, route) pair that was not.
std::string check_class_targets(const Family& family, const std::vector<ClassRun>& runs);

}  // namespace nvfp4

namespace nvfp4 {
// How RapidCheck prints a counterexample (found by ADL): the case's name, its identity.
inline void showValue(const CaseSpec& spec, std::ostream& os) { os << spec.name(); }
}  // namespace nvfp4
