// The NVFP4 operator's route table: one row per route, in the dispatcher's
// order (DESIGN.md's table written as data). Everything that knows routes
// reads it: the dispatch chain and its explanations (dispatch.cc), the run
// step (nvfp4_matmul.cc), the `routes` listing, the gate declaration and
// hardware gates (properties/nvfp4_matmul/route_coverage.cc) and the cross-route check
// (properties/nvfp4_matmul/verify_case.cc). Only DESIGN.md's route oracle
// (properties/nvfp4_matmul/route_oracle.cc) is written apart, so that it checks this table.
//
// How the chain reads a row (select_route): rows are tried in order; an
// opt_in row only when Options::native_opt_in; the first row whose `needs`
// and `prefers` all hold is taken. Its reason code is `taken_for` when the row names one,
// else the code (`miss`) of the first predicate of `passed_over` that fails:
// the predicate that sent the problem past the route this one stands in for.
// Forcing a route (Options::force_route) checks the same `needs`, not `prefers`.
//
// Adding a route: CONTRIBUTING.md, "Adding a route".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/nvfp4_matmul/nvfp4_types.h"

namespace nvh {
class Backend;
}

namespace nvfp4 {

// A named predicate over the problem and the device. `holds` is all the
// dispatcher evaluates; the text is built only to explain a decision.
struct RoutePredicate {
  const char* statement;  // e.g. "K % 128 == 0"
  // The values it looked at, e.g. "K = 96"; null when it looks at none worth naming.
  std::string (*values)(const Problem&, const Caps&);
  bool (*holds)(const Problem&, const Caps&);
  // The reason code a route that stands in for one needing this predicate is
  // taken for when it fails (see `passed_over`); null when none is.
  const char* miss;

  // "K % 128 == 0 (K = 96)": the statement with its values.
  std::string text(const Problem& p, const Caps& caps) const;
};

// An ordered list of predicates, all of which must hold. Rows share the
// predicate objects themselves, so "the same predicate" is the same address.
struct PredicateList {
  const RoutePredicate* const* items = nullptr;
  std::size_t size = 0;

  template <std::size_t N>
  constexpr PredicateList(const RoutePredicate* const (&list)[N])
      : items(list), size(N) {}  // NOLINT: implicit on purpose
  constexpr PredicateList() = default;
  constexpr const RoutePredicate* const* begin() const { return items; }
  constexpr const RoutePredicate* const* end() const { return items + size; }

  // The first predicate that fails, or null when all hold. Allocates nothing.
  const RoutePredicate* first_failure(const Problem& p, const Caps& caps) const;
};

// How a route runs a described problem on a backend. `caps`: what the
// dispatcher decided with (run_matmul clears wgmma where the device lacks
// it), which prefill_fused's plan reads. `scratch` is the prefill routes'
// dequant target (null for the others).
using RouteRunner = void (*)(nvh::Backend& backend, const MatmulArgs& args, const Problem& problem,
                             const Caps& caps, void* scratch);

struct RouteRow {
  Route route;
  const char* name;       // route_name(route): the route log's and the CLI's spelling
  PredicateList needs;    // hard preconditions, in the order they are checked and explained
  bool opt_in;            // the chain tries it only when Options::native_opt_in
  const char* taken_for;  // the reason code when taken, or null: see passed_over
  // The predicates whose first failure names the reason code when taken_for
  // is null: the needs of the route this one stands in for.
  PredicateList passed_over;
  // The kernel variant for the route log ("rows4"); a string literal. Caps:
  // the device the route runs on (prefill_fused's plan takes wgmma's kernel
  // where it has it).
  const char* (*variant)(const Problem&, const Caps&);
  RouteRunner run;
  bool needs_scratch;  // dequantizes into an [N, K] scratch first (run_matmul provides one)
  // The capability this device lacks to run the route ("" when it has it),
  // or null for a route every backend runs: a hardware gate of the gate.
  std::string (*missing_capability)(const Caps&);
  // Computes the contract, so the property suites force it onto every
  // exact-mode case it accepts and compare its bits with the dispatched
  // route's (the gate then requires its reason "forced"). False for empty (no
  // other route takes an empty problem) and native_sm120 (it quantizes A: a
  // different contract). Options::force_route takes any route whose needs hold.
  bool cross_checked;
  // What decides only whether the chain takes the route, not whether it can
  // run: a crossover measured against the route after it (prefill_fused's
  // M bound). The chain takes the row where its needs and these hold, and a
  // row standing in for it names their `miss` like a need's; a forced route
  // (and so the cross-route check) skips them. Empty for most rows.
  PredicateList prefers = {};
};

// The rows in dispatch order; row i is for Route i (static_asserted).
const RouteRow* route_table_begin();
const RouteRow* route_table_end();
struct RouteTable {
  const RouteRow* begin() const { return route_table_begin(); }
  const RouteRow* end() const { return route_table_end(); }
};
inline RouteTable route_table() { return {}; }

// The row of one route; throws std::invalid_argument for a value no row has.
const RouteRow& route_row(Route route);

// The first of the row's needs, then of its prefers, that fails; null when
// the chain would take it (allocates nothing).
const RoutePredicate* first_unmet(const RouteRow& row, const Problem& p, const Caps& caps);

// The reason codes the chain can take `row` for, in chain order: taken_for,
// or every code of passed_over that is not also one of its own needs or
// prefers (those hold whenever it is taken).
std::vector<std::string> reasons_of(const RouteRow& row);

// The table in words, for `nvfp4-harness routes`: per route its reasons,
// then its variant rule, needs and flags.
std::string route_table_text();

}  // namespace nvfp4
