#include "kernels/nvfp4_matmul/dispatch.h"

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/nvfp4_matmul/prefill_fused_plan.h"

namespace nvfp4 {
namespace {

const Caps& decision_caps(const Caps& actual, const Options& o) {
  return o.simulated_caps ? *o.simulated_caps : actual;
}

bool tried(const RouteRow& row, const Options& o) { return !row.opt_in || o.native_opt_in; }

// The reason code of a route the chain takes (route_table.h: taken_for, else
// the first failure of passed_over). A row whose passed_over names no code
// is a defect of the table (dispatch_test checks every row).
std::string_view reason_taken(const RouteRow& row, const Problem& p, const Caps& caps) {
  if (row.taken_for) return row.taken_for;
  const RoutePredicate* miss = row.passed_over.first_failure(p, caps);
  if (!miss || !miss->miss) {  // LCOV_EXCL_BR_LINE: a table defect, never taken
    throw std::logic_error(
        std::string("select_route: ") + row.name +  // LCOV_EXCL_LINE
        " taken with no reason code: its passed_over has no failing predicate with one");
  }
  return miss->miss;
}

[[noreturn]] void refuse(const RouteRow& row, const RoutePredicate& failing, const Problem& p,
                         const Caps& caps) {
  throw std::invalid_argument(std::string("select_route: force_route = ") + row.name +
                              " refused: " + failing.text(p, caps) + " fails");
}

// "M > 0 (M = 1), N > 0 (N = 64) hold": every need with its values (and,
// for the chain's choice, every predicate the row prefers).
std::string needs_hold(const RouteRow& row, const Problem& p, const Caps& caps, bool with_prefers) {
  std::string out;
  std::size_t count = row.needs.size;
  for (const RoutePredicate* need : row.needs)
    out += (out.empty() ? "" : ", ") + need->text(p, caps);
  if (with_prefers) {
    for (const RoutePredicate* pref : row.prefers) out += ", " + pref->text(p, caps);
    count += row.prefers.size;
  }
  return out + (count == 1 ? " holds" : " hold");
}

// The clause for a row the chain tried and passed over.
std::string passed_over_clause(const RouteRow& row, const RoutePredicate& failing, const Problem& p,
                               const Caps& caps) {
  return std::string(row.name) + (row.opt_in ? " opted in but passed over: " : " passed over: ") +
         failing.text(p, caps) + " fails";
}

// The clause for the row taken.
std::string taken_clause(const RouteRow& row, const Problem& p, const Caps& caps) {
  std::string out = std::string(row.name) + " taken for " + std::string(reason_taken(row, p, caps));
  if (!row.taken_for)
    out += " (" + row.passed_over.first_failure(p, caps)->text(p, caps) + " fails)";
  return out + ": " + needs_hold(row, p, caps, true);
}

}  // namespace

bool prefill_fused_full_blocks(int64_t M, const Caps& caps) {
  return caps.wgmma && M >= kFusedFullBlocksMinM && M <= kFusedFullBlocksMaxM &&
         M % kFusedFullBlockRows == 0;
}

bool prefill_fused_rounds_decide(int64_t M, const Caps& caps) {
  return (caps.wgmma && M >= kFusedTwoBlocksMinM && M <= kFusedTwoBlocksMaxM) ||
         prefill_fused_full_blocks(M, caps);
}

namespace {
// N x K >= least for whatever N and K the caller passed (a product past
// int64 is more than any least).
bool weights_at_least(int64_t N, int64_t K, int64_t least) {
  if (least <= 0) return true;
  if (N <= 0 || K <= 0) return false;
  int64_t values = 0;
  return __builtin_mul_overflow(N, K, &values) || values >= least;
}
}  // namespace

bool prefill_fused_preferred(int64_t M, int64_t N, int64_t K, const Caps& caps) {
  for (const FusedBand& band : kFusedBands) {
    if (M > band.max_m) continue;
    return (caps.wgmma || !band.needs_wgmma) && weights_at_least(N, K, band.min_weights);
  }
  if (!prefill_fused_rounds_decide(M, caps)) return false;
  return prefill_fused_fills_its_rounds(
      prefill_fused_plan(M, N, K, true), M, N, K,
      prefill_fused_full_blocks(M, caps) ? kFusedFullBlocksFillPercent : kFusedRoundFillPercent);
}

int gemv_scalar_rows_per_warp(int64_t N) { return N % 4 == 0 ? 4 : N % 2 == 0 ? 2 : 1; }

std::string route_precondition_failure(Route route, const Problem& p, const Caps& caps) {
  const RoutePredicate* miss = route_row(route).needs.first_failure(p, caps);
  return miss ? miss->text(p, caps) + " fails" : "";
}

const std::vector<std::string>& route_reasons(Route route) {
  static const std::array<std::vector<std::string>, kRouteCount> kReasons = [] {
    std::array<std::vector<std::string>, kRouteCount> all;
    for (const RouteRow& row : route_table())
      all[static_cast<std::size_t>(row.route)] = reasons_of(row);
    return all;
  }();
  return kReasons[static_cast<std::size_t>(route_row(route).route)];
}

RouteChoice select_route(const Problem& p, const Caps& actual_caps, const Options& o) {
  const Caps& caps = decision_caps(actual_caps, o);
  if (o.force_route) {
    const RouteRow& row = route_row(*o.force_route);
    if (const RoutePredicate* failing = row.needs.first_failure(p, caps))
      refuse(row, *failing, p, caps);
    return {row.route, kForcedReason};
  }
  for (const RouteRow& row : route_table()) {
    if (tried(row, o) && !first_unmet(row, p, caps)) return {row.route, reason_taken(row, p, caps)};
  }
  // The last row needs only a non-empty problem and the first takes the empty ones.
  throw std::logic_error(
      "select_route: no route takes this problem");  // LCOV_EXCL_LINE: a table defect
}

Decision explain_route(const Problem& p, const Caps& actual_caps, const Options& o) {
  const RouteChoice choice = select_route(p, actual_caps, o);
  const Caps& caps = decision_caps(actual_caps, o);
  const RouteRow& taken = route_row(choice.route);
  Decision d{choice.route, taken.variant(p, caps), std::string(choice.reason), ""};
  if (o.force_route) {
    d.detail = "forced to " + std::string(taken.name) + ": " + needs_hold(taken, p, caps, false);
    return d;
  }
  for (const RouteRow& row : route_table()) {
    if (!d.detail.empty()) d.detail += "; ";
    if (&row == &taken) {
      d.detail += taken_clause(row, p, caps);
      break;
    }
    if (!tried(row, o)) {
      d.detail += std::string(row.name) + " not opted in";
    } else {
      d.detail += passed_over_clause(row, *first_unmet(row, p, caps), p, caps);
    }
  }
  return d;
}

}  // namespace nvfp4
