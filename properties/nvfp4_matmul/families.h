// The case families: one per branch of the dispatcher the seed's blind spot
// teaches us to aim at (every test had M <= 8, so the prefill dequant never ran).
// Each family lists its explicit boundary examples, run first, then draws
// random cases from a RapidCheck generator, and states which routes it must
// reach and in what share of its random cases, so a generator that drifts off
// its branch fails instead of silently testing something else.
#pragma once

#include <rapidcheck.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/backend.h"
#include "kernels/nvfp4_matmul/nvfp4_types.h"
#include "properties/nvfp4_matmul/matmul_case.h"
#include "properties/nvfp4_matmul/verify_case.h"

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

// What the launchers see of the backend an aim is judged on.
struct AimContext {
  nvh::BackendKind kind = nvh::BackendKind::host;
  int multiprocessors = 0;     // as the launchers see it: 0 on the host executor
  std::string native_missing;  // what native_sm120 lacks here; "" where it runs
  bool wgmma = false;          // the device has wgmma (Caps::wgmma): prefill_fused's w128n128 runs
};
AimContext aim_context(const nvh::Backend& backend);

// One example as it ran: the evidence an aim is judged on.
struct ExampleResult {
  CaseSpec spec;
  CaseVerdict verdict;
};

// A claim beyond route shares that named examples of a family must make
// true: a launch-geometry cap crossed, a capability threshold met, an
// alignment class reached, each computed from the kernels' and the
// dispatcher's own constants and shape functions (a route share cannot see
// any of these). Checked on every backend the family runs on, in the suites
// and in `verify`, so a case that drifts off its aim fails.
struct Aim {
  std::string claim;               // in words, with the constants it comes from
  std::vector<std::string> cases;  // names of the examples aimed at it: each must reach it
  std::function<bool(const CaseSpec&, const CaseVerdict&, const AimContext&)> reached;
  // "" where the aim can be reached on this backend, else why not (then
  // reported, not required): e.g. a GPU-only kernel on the host executor.
  std::function<std::string(const AimContext&)> unreachable_here;
};

struct Family {
  // A constructor rather than aggregate initialization, so families that
  // set no class targets need not name them.
  Family(std::string name_, std::string aim_, std::vector<CaseSpec> examples_,
         rc::Gen<CaseSpec> random_, std::vector<RouteTarget> targets_,
         std::vector<ClassTarget> class_targets_ = {})
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
  std::vector<ClassTarget>
      class_targets;  // over examples and random cases; empty for most families
  // Named aims of the examples; when there are any, every example names one.
  std::vector<Aim> aims = {};
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
// "" when every aim that can be reached here is reached by each example it
// names (and every example, in a family with aims, names one), else what
// fell short. `examples`: the family's examples as they ran here.
std::string check_aims(const Family& family, const std::vector<ExampleResult>& examples,
                       const AimContext& context);

// The aims of a family this backend cannot reach, each "claim: why".
std::vector<std::string> aims_unreachable_here(const Family& family, const AimContext& context);

// Whether a case's outcome counts as run: OK, or NOT_SUPPORTED because its
// route is hardware-gated on this backend (a route it lacks, named).
bool ran_or_gated(const CaseVerdict& verdict, const AimContext& context);

}  // namespace nvfp4

namespace nvfp4 {
// How RapidCheck prints a counterexample (found by ADL): the case's name, its identity.
inline void showValue(const CaseSpec& spec, std::ostream& os) { os << spec.name(); }
}  // namespace nvfp4
