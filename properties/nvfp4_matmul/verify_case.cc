#include "properties/nvfp4_matmul/verify_case.h"

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/nvfp4_matmul/dispatch.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "properties/nvfp4_matmul/route_oracle.h"

namespace nvfp4 {
namespace {

CaseVerdict failed(CaseVerdict v, const std::string& property, const std::string& what) {
  v.outcome = Outcome::fail;
  v.detail = "(" + property + ") " + what;
  return v;
}

// The first failing check among (a), (b), (c) for one run, or "".
std::string first_problem(const CaseSpec& spec, const CaseInputs& in, const Oracle& oracle,
                          const CaseRun& run, const ExpectedRoute& expected,
                          std::string* property) {
  if (run.decision.route != expected.route || run.decision.reason != expected.reason) {
    *property = "a";
    return std::string("took ") + route_name(run.decision.route) + " (" + run.decision.reason +
           "), DESIGN.md's table says " + route_name(expected.route) + " (" + expected.reason +
           "): " + run.decision.detail;
  }
  *property = "b";
  if (std::string e = check_scratch(run, oracle); !e.empty()) return e;
  *property = "c";
  if (std::string e = check_guards(run); !e.empty()) return e;
  if (std::string e = check_nonzero(spec, in, run, oracle); !e.empty()) return e;
  if (std::string e = check_output_bound(spec, in, run, oracle); !e.empty()) return e;
  return "";
}

// The cross-checked routes (route_table.h) other than `taken` that could run this case if forced.
std::vector<Route> other_routes_accepting(const CaseSpec& spec, nvh::Backend& backend,
                                          Route taken) {
  const Problem p = problem_of(spec);
  const Caps caps = device_caps(backend);
  std::vector<Route> out;
  for (const RouteRow& row : route_table()) {
    if (row.route != taken && row.cross_checked && !row.needs.first_failure(p, caps))
      out.push_back(row.route);
  }
  return out;
}

// The same case with only a forced route: no opt-ins, no simulated device.
CaseSpec forced(CaseSpec spec, Route r) {
  Options only_forced;
  only_forced.force_route = r;
  spec.options = only_forced;
  return spec;
}

// NOT_SUPPORTED, with the dispatcher's decision: the route it chose cannot run here.
CaseVerdict not_supported(CaseVerdict v, const Decision& dispatched, const std::string& why) {
  v.outcome = Outcome::not_supported;
  v.route = route_name(dispatched.route);
  v.reason = dispatched.reason;
  v.decision = dispatched;
  v.detail = why;
  return v;
}

}  // namespace

Problem problem_of(const CaseSpec& spec) {
  Problem p;
  p.M = spec.M;
  p.N = spec.N;
  p.K = spec.K;
  p.block_size = spec.block_size;
  p.dtype = spec.dtype;
  p.has_bias = spec.bias;
  p.a_address_mod16 = spec.a_offset % 16;
  p.b_address_mod16 = spec.b_offset % 16;
  p.scratch_address_mod16 = spec.scratch_offset % 16;
  p.scales_address_mod4 = spec.scales_offset % 4;
  return p;
}

CaseVerdict verify_case(nvh::Backend& backend, const CaseSpec& spec) {
  CaseVerdict v;
  const Caps caps = device_caps(backend);
  const ExpectedRoute expected = expected_route(spec, caps);
  // A route this machine lacks is NOT_SUPPORTED before any input is built
  // (run_matmul would refuse it the same way), so a case sized for that
  // route costs nothing here.
  const Decision dispatched = explain_route(problem_of(spec), caps, spec.options);
  if (const RouteRow& row = route_row(dispatched.route); row.missing_capability) {
    const std::string missing = row.missing_capability(caps);
    if (!missing.empty())
      return not_supported(v, dispatched, RouteUnavailable(row.route, missing).what());
  }
  const CaseInputs in = make_inputs(spec);

  CaseRun run;
  try {
    run = run_case(backend, spec, in);
  } catch (const RouteUnavailable& e) {
    return not_supported(v, dispatched, e.what());
  }
  const Oracle oracle = make_oracle(spec, in);
  v.route = route_name(run.decision.route);
  v.reason = run.decision.reason;
  v.y_sha256 = run.y_sha256;
  v.routes_run.push_back(run.decision.route);
  v.decision = run.decision;
  v.addresses = run.addresses;

  std::string property;
  if (std::string e = first_problem(spec, in, oracle, run, expected, &property); !e.empty()) {
    return failed(v, property, e);
  }

  // (f) the same bits again.
  if (const CaseRun again = run_case(backend, spec, in); again.y_sha256 != run.y_sha256) {
    return failed(v, "f", "a second run gave " + again.y_sha256 + ", the first " + run.y_sha256);
  }

  // (e) the scalar dequant must produce the very scratch the vectorized one did.
  if (run.decision.route == Route::prefill_vec8) {
    const CaseRun scalar = run_case(backend, forced(spec, Route::prefill_scalar), in);
    if (std::string e = check_scratch(scalar, oracle); !e.empty())
      return failed(v, "e", "prefill_scalar: " + e);
    if (scalar.y_sha256 != run.y_sha256) {
      return failed(v, "e",
                    "prefill_scalar gave " + scalar.y_sha256 + ", prefill_vec8 " + run.y_sha256);
    }
    v.routes_run.push_back(Route::prefill_scalar);
  }

  // (d) exact mode: the exact answer, from every route that accepts the shape.
  if (spec.exact && oracle.exact) {
    if (std::string e = check_output_exact(run, oracle); !e.empty()) return failed(v, "d", e);
    for (Route r : other_routes_accepting(spec, backend, run.decision.route)) {
      const CaseRun other = run_case(backend, forced(spec, r), in);
      // A forced prefill route's scratch is the contract's weights too.
      if (std::string e = check_scratch(other, oracle); !e.empty()) {
        return failed(v, "d", std::string(route_name(r)) + ": " + e);
      }
      if (other.y_sha256 != run.y_sha256) {
        return failed(v, "d",
                      std::string(route_name(r)) + " gave " + other.y_sha256 + ", " + v.route +
                          " " + run.y_sha256);
      }
      if (std::find(v.routes_run.begin(), v.routes_run.end(), r) == v.routes_run.end())
        v.routes_run.push_back(r);
    }
  } else if (spec.exact) {
    return failed(v, "d", "the exact-mode inputs are not exact: " + oracle.exact_why);
  }
  return v;
}

}  // namespace nvfp4
