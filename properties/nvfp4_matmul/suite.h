// The NVFP4 matmul as an operator suite (harness/operator_suite.h): what the
// harness's one verify driver (harness/verify_driver.h) runs for it.
//   self checks "primitives": all 256 packed bytes and E4M3 bytes against the
//     CUDA toolkit's conversions;
//   the families (families.h): boundary examples, then random cases, each
//     checked for properties (a)-(f) (verify_case.h); a family is judged for
//     its route targets, class targets and aims;
//   group "model": the synthetic prefill's token hash on every route, which
//     must agree across routes;
//   group "golden": the seed8 case list's digests against the golden manifest
//     built into the binary (host executor: properties/nvfp4_matmul/golden/
//     seed8.host.json; an sm_90 GPU: seed8.h200.json; any other GPU: SKIPPED,
//     the file is the H200's).
// A failing case leaves a repro folder (repro.h).
#pragma once

#include <string>

#include "harness/operator_suite.h"
#include "properties/nvfp4_matmul/matmul_case.h"

namespace nvfp4 {

const nvh::OperatorSuite& nvfp4_suite();

// A case as manifest.json keys it, "FAMILY/CASE" (a family of all_families(),
// or "golden" for a seed8 case; CASE as CaseSpec::name() writes it), read
// back into its case (family set). Throws std::invalid_argument naming the key
// and the bad part: no '/', an unknown family, a golden case not in seed8, a
// CASE parse_case_name refuses. ("model/LABEL" keys name no CaseSpec.)
CaseSpec parse_case_key(const std::string& key);

}  // namespace nvfp4
