// `nvfp4-harness verify`, the main job: every verification level on one
// backend, in one run.
//   1. primitives: all 256 packed bytes and E4M3 bytes against the CUDA toolkit;
//   2. operator: every case family (boundary examples, then random cases),
//      each case checked for properties (a)-(f) (verify_case.h);
//   3. model: the synthetic prefill's token hash on every route;
// then the route-coverage gate over the launches this run made. Prints
// progress, the route table and a summary with the four outcomes; writes the
// route records, the hash manifest and JUnit XML.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "harness/backend.h"

namespace nvfp4 {

struct VerifyOptions {
  std::vector<std::string> families;  // empty: all
  int random_cases = -1;              // per family; -1: 25 on the host, 200 on a GPU
  uint64_t seed = 1;
  std::string out_dir = "out/verify";
  bool primitives = true, model = true;
  // Kernel branch coverage (harness/probe.h, builds with NVFP4_DEVICE_PROBES):
  // the probe counts of this run on this backend as an lcov tracefile ("" = none),
  // its SF paths under source_root ("" = the source tree this was built from).
  std::string device_coverage;
  std::string source_root;
};

// Returns the process exit code: 0 when nothing failed and the gate passed.
int run_verify(nvh::Backend& backend, const VerifyOptions& options, std::ostream& out);

}  // namespace nvfp4
