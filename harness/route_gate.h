// The route-coverage gate: did the tests reach every route an operator
// declares, for every reason it declares, and did no launch take a route or
// reason that was not declared? Operator-agnostic: routes, reasons and
// families are data.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "harness/route_record.h"

namespace nvh {

// A route and every reason for which the dispatcher may choose it.
struct RouteDeclaration {
  std::string route;
  std::vector<std::string> reasons;
};

// A test family that must have run, on at least one of its target routes: a
// family whose tests were dropped (or drifted off their branch) fails the gate
// even when other families still happen to reach every route.
struct FamilyDeclaration {
  std::string family;
  std::vector<std::string> routes;
};

struct GateDeclaration {
  std::string op;
  std::vector<RouteDeclaration> routes;
  std::vector<FamilyDeclaration> families;  // may be empty
};

// Routes this machine cannot run: route -> the missing capability, in words.
using HardwareGates = std::map<std::string, std::string>;

enum class Coverage {
  kExecuted,            // declared, ran at least once
  kHardwareGated,       // declared, gated on this machine, never ran: satisfied
  kMissing,             // declared, never ran: failure
  kExecutedWhileGated,  // ran although this machine lacks the capability: failure
  kUndeclared,          // ran but not declared: failure
};

// "executed", "hardware-gated", "MISSING", "EXECUTED-WHILE-GATED", "UNDECLARED".
std::string_view to_string(Coverage coverage);

struct ReasonCoverage {
  std::string reason;
  std::size_t executed = 0;
  Coverage status = Coverage::kMissing;
};

struct RouteCoverage {
  std::string route;
  Coverage status = Coverage::kMissing;
  std::string capability;  // the missing capability, for a gated route
  std::size_t executed = 0;
  std::map<std::string, std::size_t> by_family;  // families it ran in; "" = none named
  // Declared reasons in declaration order, then undeclared ones seen in records, sorted.
  std::vector<ReasonCoverage> reasons;
};

struct FamilyCoverage {
  std::string family;
  std::vector<std::string> routes;
  std::size_t on_target = 0;  // launches of this family on one of its routes
  Coverage status = Coverage::kMissing;
};

struct GateReport {
  std::string op;
  std::vector<FamilyCoverage> required_families;  // in declaration order
  std::vector<std::string> families;              // every family in the op's records, sorted
  // Declared routes in declaration order, then undeclared ones seen in records, sorted.
  std::vector<RouteCoverage> routes;
  std::size_t other_op_records = 0;  // records of other operators, not judged

  // One line per failing route and per failing (route, reason).
  std::vector<std::string> problems() const;
  bool passed() const;
};

// Judges the op's records against its declaration. A route or reason is
// satisfied when it ran at least once, or, if gated on this machine, when it
// never ran. Throws std::invalid_argument for an inconsistent declaration (no
// op, no routes, an empty or repeated route or reason, a route without
// reasons) or a gate naming an undeclared route or no capability.
GateReport evaluate_gate(const GateDeclaration& declaration, const HardwareGates& gates,
                         const std::vector<LaunchRecord>& records);

// Fixed-width text: a route x family table of launch counts with a status
// column, then each route's reasons, then the problems.
//
// A run that cannot be judged (e.g. one that ran only some families) passes a
// non-empty `not_judged_why`: the first line then says "gate not judged: "
// and why instead of passed or FAILED, a declared route, reason or family
// that did not run reads "not reached" instead of MISSING, and no problems
// are listed (UNDECLARED and EXECUTED-WHILE-GATED still show: no filter
// excuses them).
std::string render_gate_text(const GateReport& report, const std::string& not_judged_why = "");

// The same content as pretty JSON: op, passed, families, routes (each with
// status, capability if gated, executed, by_family for every family, reasons),
// problems, other_op_records. Not judged: "passed" is null and
// "not_judged_why" says why.
std::string render_gate_json(const GateReport& report, const std::string& not_judged_why = "");

}  // namespace nvh
