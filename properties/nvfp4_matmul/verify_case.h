// Every property a single case must satisfy, run in one place so the
// RapidCheck suites and `nvfp4-harness verify` check exactly the same things:
//   (a) the route taken is the one DESIGN.md's table promises (route_oracle.h);
//   (b) the dequant scratch equals the reference dequant, bit for bit;
//   (c) the output is within the stated bound of the fp64 reference, and
//       neither inputs nor output are all zero; no guard byte is touched;
//   (d) exact mode: the output is the rounded exact sum, and every other route
//       that accepts the shape (forced) gives the same SHA-256 (and a forced
//       prefill route the reference's scratch);
//   (e) forcing prefill_scalar where prefill_vec8 ran gives the same SHA-256
//       and the reference's scratch;
//   (f) a second run gives the same SHA-256.
#pragma once

#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/operator_suite.h"
#include "properties/nvfp4_matmul/matmul_case.h"

namespace nvfp4 {

// The four outcomes of a case (the harness's); a waiver is never a pass.
using nvh::Outcome;
using nvh::outcome_name;

struct CaseVerdict {
  Outcome outcome = Outcome::ok;
  std::string route;  // as taken (recorded)
  std::string reason;
  std::string detail;    // what failed, or why not supported / skipped
  std::string y_sha256;  // the output digest of the natural route
  // The routes whose output this case checked: the natural one, then every
  // forced one that gave its SHA-256 ((d), (e)). Complete only for OK.
  std::vector<Route> routes_run;
  // What the families' aims are judged on (families.h): the decision as run
  // (variant with the GEMM step's), or, for a route that is hardware-gated
  // here, as the dispatcher gave it; and where run_case placed each operand.
  Decision decision;
  AddressClasses addresses;
};

// What the dispatcher sees of a case before it runs: shape, type and the
// operands' alignment from the spec's offsets (buffers start 256-byte aligned).
Problem problem_of(const CaseSpec& spec);

CaseVerdict verify_case(nvh::Backend& backend, const CaseSpec& spec);

}  // namespace nvfp4
