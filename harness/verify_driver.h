// `verify` for any operator suite (harness/operator_suite.h): on one backend,
// in one run, the suite's self checks, then every case of its families and
// other groups, each group judged by the suite, then the route-coverage gate
// over the launches this run made. Prints progress and a summary with the
// four outcomes; writes the route records (routes.jsonl), the hash manifest
// (manifest.json), JUnit XML (junit.xml), what `merge` needs (shard.json,
// results.jsonl) and, through the suite, a repro folder for each failing case.
//
// Cases run in worker processes (harness/isolation.h): a case that crashes its
// worker (SIGFPE, SIGSEGV, ...) is a FAIL for that case and the run goes on
// with the next one in a fresh worker. Each worker makes its own backend;
// this process never makes one, since a CUDA context does not survive fork.
//
// The command line (harness/suite_cli.h), the families test and the gate test
// of an operator all run their cases through run_verify: one loop.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/operator_suite.h"
#include "harness/shard.h"

namespace nvh {

struct VerifyOptions {
  std::vector<std::string> families;  // empty: all
  int random_cases = -1;  // per family; -1: 25 on the host, 200 on a GPU; 0: boundary examples only
  uint64_t seed = 1;
  std::string out_dir = "out/verify";
  // Groups not to run: the self checks' group or other groups, by name
  // (OperatorSuite::skippable); every family runs unless `families` narrows them.
  std::vector<std::string> skip;
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
  // before each case runs, with its group and name; the crash-isolation tests
  // raise signals and throw from it.
  std::function<void(const std::string& group, const std::string& case_name)> before_case;
  // Tests only: runs only the planned cases it accepts (e.g. a test that
  // leaves out cases sized for a grid cap). A filtered run judges no gate.
  std::function<bool(const std::string& group, const std::string& case_name)> case_filter;
  // --case: run only these, each named as manifest.json keys it ("GROUP/CASE");
  // empty: the whole plan. Then no self checks, and neither the gate nor the
  // groups' claims over all their cases are judged (one case cannot reach
  // them); each case prints its line.
  std::vector<std::string> cases;
  // --shard / GTEST_TOTAL_SHARDS + GTEST_SHARD_INDEX: the cases as one list in
  // plan order, task i run by shard i % count (Shard::owns); the self checks by
  // shard 0. A shard judges its cases, not the gate or the groups' claims over
  // all their cases: `merge` does, over all shards.
  Shard shard;
};

// Makes the backend the cases run on; called once in each worker process.
using BackendFactory = std::function<std::unique_ptr<Backend>()>;

// Returns the process exit code: 0 when nothing failed and the gate passed
// (or was not judged: a --family filter). Throws what make_backend throws
// (e.g. BackendUnavailable) when no worker can make a backend, and
// std::invalid_argument naming the option for bad options (an out_dir that
// cannot be made, an unknown family or --skip name, a --case key the suite
// does not have).
int run_verify(const OperatorSuite& suite, const BackendFactory& make_backend,
               const VerifyOptions& options, std::ostream& out);

// A key as manifest.json writes it, "GROUP/CASE", checked against the suite
// (OperatorSuite::check_case). Throws std::invalid_argument naming the key and
// what is wrong: no '/', or what the suite says.
void check_case_key(const OperatorSuite& suite, const std::string& key);

// The keys of the cases a run with these options on `backend` runs, in run order.
std::vector<std::string> planned_case_keys(const OperatorSuite& suite, const VerifyOptions& options,
                                           const BackendDescription& backend);

// `merge`: the --out folders of the n shards of one verify run (every shard
// once, from the same options, seed and backend) combined into out_dir as one
// run would have written it: results and manifests united, route logs
// concatenated, JUnit rebuilt, then every group and the route gate judged over
// the whole. Returns run_verify's exit code for the merged run; throws
// std::invalid_argument naming the folder and what is wrong (a shard missing
// or given twice, a case in two shards, shards of different seeds, backends,
// options or case counts).
struct MergeOptions {
  std::string out_dir = "out/verify";
  std::vector<std::string> shard_dirs;
};
int run_merge(const OperatorSuite& suite, const MergeOptions& options, std::ostream& out);

}  // namespace nvh
