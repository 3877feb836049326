// `nvfp4-harness verify`, the main job: every verification level on one
// backend, in one run.
//   1. primitives: all 256 packed bytes and E4M3 bytes against the CUDA toolkit;
//   2. operator: every case family (boundary examples, then random cases),
//      each case checked for properties (a)-(f) (verify_case.h);
//   3. model: the synthetic prefill's token hash on every route;
//   4. golden: the seed8 case list's digests against the golden manifest built
//      into the binary (host executor: properties/golden/seed8.host.json; an
//      sm_90 GPU: seed8.h200.json; any other GPU: SKIPPED, the file is the H200's);
// then the route-coverage gate over the launches this run made. Prints
// progress, the route table and a summary with the four outcomes; writes the
// route records, the hash manifest and JUnit XML, and for each failing case a
// repro folder under <out>/repro (properties/repro.h).
//
// Levels 2 to 4 run in worker processes (harness/isolation.h): a case that
// crashes its worker (SIGFPE, SIGSEGV, ...) is a FAIL for that case and the
// run goes on with the next one in a fresh worker. Each worker makes its own
// backend; this process never makes one, since a CUDA context does not
// survive fork.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/shard.h"
#include "properties/matmul_case.h"

namespace nvfp4 {

struct VerifyOptions {
  std::vector<std::string> families;  // empty: all
  int random_cases = -1;  // per family; -1: 25 on the host, 200 on a GPU; 0: boundary examples only
  uint64_t seed = 1;
  std::string out_dir = "out/verify";
  bool primitives = true, model = true, golden = true;
  // Cases run in forked workers, so a crash fails only its case; false runs
  // them in this process (--no-fork: for debuggers), where a crash ends the run.
  bool isolate = true;
  // Kernel branch coverage (harness/probe.h, builds with NVFP4_DEVICE_PROBES):
  // the probe counts of this run on this backend as an lcov tracefile ("" = none),
  // its SF paths under source_root ("" = the source tree this was built from).
  // A worker that crashes takes its counts with it.
  std::string device_coverage;
  std::string source_root;
  // Tests only (the command line never sets it): called in the worker just
  // before each level-2 case runs, with the family and case name; the
  // crash-isolation tests raise signals and throw from it.
  std::function<void(const std::string& family, const std::string& case_name)> before_case;
  // --case: run only these, each named as manifest.json keys it ("FAMILY/CASE",
  // "golden/CASE"; the model's ways as "model/LABEL"); empty: the whole plan.
  // Then no level 1, and neither the gate nor the families' route targets and
  // aims are judged (one case cannot reach them); each case prints its line.
  std::vector<std::string> cases;
  // --shard / GTEST_TOTAL_SHARDS + GTEST_SHARD_INDEX: levels 2 to 4 as one list in
  // plan order, task i run by shard i % count (nvh::Shard::owns); level 1 by
  // shard 0. A shard judges its cases, not the gate, the families' route
  // targets and aims or the model's cross-route hash: `merge` does, over all shards.
  nvh::Shard shard;
};

// Makes the backend the cases run on; called once in each worker process.
using BackendFactory = std::function<std::unique_ptr<nvh::Backend>()>;

// Returns the process exit code: 0 when nothing failed and the gate passed
// (or was not judged: a --family filter). Throws what make_backend throws
// (e.g. nvh::BackendUnavailable) when no worker can make a backend.
//
// Besides junit.xml, manifest.json and routes.jsonl, every run writes what
// `merge` needs into its --out folder: shard.json (the options, the shard, the
// backend, level 1's results) and results.jsonl (each task's key and what its
// worker returned, one line per task).
int run_verify(const BackendFactory& make_backend, const VerifyOptions& options, std::ostream& out);

// A case as manifest.json keys it, "FAMILY/CASE" (a family of all_families(),
// or "golden" for a seed8 case; CASE as CaseSpec::name() writes it), read
// back into its case (family set). Throws std::invalid_argument naming the key
// and the bad part: no '/', an unknown family, a golden case not in seed8, a
// CASE parse_case_name refuses.
CaseSpec parse_case_key(const std::string& key);

// What --case takes: a key parse_case_key reads, or "model/LABEL" naming one
// of the model's ways. Throws std::invalid_argument naming the key and what is wrong.
void check_case_key(const std::string& key);

// The family and golden cases of a run with these options, in the order it
// runs them, keyed as its manifest keys them. `host`: what the run's backend
// is (the default number of random cases and the golden level depend on it).
struct PlannedCase {
  std::string key;
  CaseSpec spec;
};
std::vector<PlannedCase> planned_cases(const VerifyOptions& options, bool host);

// `nvfp4-harness merge`: the --out folders of the n shards of one verify run
// (every shard once, from the same options, seed and backend) combined into
// out_dir as one run would have written it: results and manifests united,
// route logs concatenated, JUnit rebuilt, then the families' targets and aims,
// the model's cross-route hash and the route gate judged over the whole.
// Returns run_verify's exit code for the merged run; throws
// std::invalid_argument naming the folder and what is wrong (a shard missing
// or given twice, a case in two shards, shards of different seeds, backends,
// options or case counts).
struct MergeOptions {
  std::string out_dir = "out/verify";
  std::vector<std::string> shard_dirs;
};
int run_merge(const MergeOptions& options, std::ostream& out);

}  // namespace nvfp4
