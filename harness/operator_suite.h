// What an operator gives the harness so that one driver (harness/verify_driver.h)
// can verify it on any backend: its name, its route table in words, its gate
// declaration and hardware gates, its case families (boundary examples, then
// random draws), the identity of each case (a name that parses back), how to
// run one case on a backend, how to judge a family over its cases, and the
// files its kernel branch probes sit in.
//
// The harness knows no operator: an operator's wing (kernels/<op>/,
// properties/<op>/ ...) implements this interface, and the command line
// (harness/suite_cli.h) and the test suites drive it. examples/ holds a small
// operator put under the harness this way from outside this tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/route_gate.h"

namespace nvh {

// The four outcomes of a case; a waiver is never a pass.
enum class Outcome { ok, fail, not_supported, skipped };
// "OK", "FAIL", "NOT_SUPPORTED", "SKIPPED".
const char* outcome_name(Outcome outcome);
// The outcome outcome_name() names, or nullopt.
std::optional<Outcome> parse_outcome(const std::string& name);

// One case as its worker ran it.
struct CaseResult {
  Outcome outcome = Outcome::ok;
  std::string detail;  // what failed, or why not supported / skipped
  std::string route;   // the route the operator took ("" when none ran)
  std::string digest;  // the output's SHA-256 (hex) for manifest.json; "" when none
  // What the group's judge reads beyond the above (the suite's own JSON text;
  // the driver only carries it from the worker to the judge).
  std::string evidence;
  double seconds = 0;
};

// Cases run together and judged together: a test family, or another level of
// the operator's (e.g. a golden list checked against a manifest).
struct CaseGroup {
  std::string name;                // the key prefix of its cases: "<name>/<case>"
  std::vector<std::string> cases;  // in run order; each parses back (OperatorSuite::check_case)
  std::size_t examples = 0;        // the first `examples` are boundary examples, the rest random
  std::string title;               // the progress line's label; "" = name
  // Not run on this backend, and why (the driver reports one SKIPPED entry).
  std::string skipped_why;
};

// How a backend looked to a worker: what the driver needs to plan and judge
// without making a backend itself (a CUDA context does not survive fork).
struct BackendDescription {
  std::string name, arch, device_name;
  bool host = true;
  HardwareGates gates;  // the suite's hardware gates on this backend
  std::string context;  // the suite's own view of the backend (OperatorSuite::describe)
};

// A group's verdict beyond its cases' own outcomes.
struct GroupJudgement {
  // Extra failures, each (check, detail): recorded as "<group>/<check>" FAIL.
  std::vector<std::pair<std::string, std::string>> failures;
  std::vector<std::string>
      notes;            // printed under the group (e.g. an aim this backend cannot reach)
  std::string summary;  // the group's summary line; "" = the driver's counts
};

// In-process checks an operator runs before its cases (e.g. format primitives
// against a toolkit): no backend, no worker.
struct SelfCheck {
  std::string name;
  Outcome outcome = Outcome::ok;
  std::string detail;
};
struct SelfCheckReport {
  std::string group;  // their key prefix, e.g. "primitives"; "" = the suite has none
  std::vector<SelfCheck> checks;
  std::string line;  // what the run prints for them
};

class OperatorSuite {
 public:
  virtual ~OperatorSuite() = default;

  // The operator as its launch records name it (LaunchRecord::op).
  virtual std::string name() const = 0;
  // The command name printed in outputs, e.g. "nvfp4-harness".
  virtual std::string tool() const { return name() + "-harness"; }
  // The route table in words (`routes`).
  virtual std::string routes_text() const = 0;
  virtual GateDeclaration gate_declaration() const = 0;
  virtual HardwareGates hardware_gates(const Backend& backend) const = 0;
  // What judge_group needs to know of a backend, as text (any format the suite reads back).
  virtual std::string describe(const Backend& backend) const {
    (void)backend;
    return "";
  }

  // The case families, in run order; each has a one-line aim.
  virtual std::vector<std::string> family_names() const = 0;
  virtual std::string family_aim(const std::string& family) const = 0;
  // A family's boundary examples, then `random` cases drawn reproducibly from `seed`.
  virtual CaseGroup family_group(const std::string& family, int random, uint64_t seed) const = 0;
  // Groups run after the families (may depend on the backend); names other
  // than the families'. `skippable`: the names --skip takes.
  virtual std::vector<CaseGroup> other_groups(const BackendDescription& backend) const {
    (void)backend;
    return {};
  }
  virtual std::vector<std::string> skippable() const { return {}; }
  // Throws std::invalid_argument naming "<group>/<case_name>" and what is
  // wrong when it is no case of this suite (unknown group, a name that does
  // not parse, a case a fixed list does not have).
  virtual void check_case(const std::string& group, const std::string& case_name) const = 0;

  // Runs one case in a worker. Its launches are recorded under (group, case_name).
  virtual CaseResult run_case(Backend& backend, const std::string& group,
                              const std::string& case_name) const = 0;

  // Judges a group over its cases, once all have arrived. `results[i]` is
  // cases[i]'s, null where it did not run (a crash is a FAIL result). It may
  // turn results into failures (e.g. a hash that must agree across cases).
  // `whole`: every case of the group ran here (not a shard or --case), so
  // claims over the whole group (route shares, aims) can be judged.
  virtual GroupJudgement judge_group(const CaseGroup& group, std::vector<CaseResult*>& results,
                                     const BackendDescription& backend, bool whole) const {
    (void)group;
    (void)results;
    (void)backend;
    (void)whole;
    return {};
  }

  // A failing case's self-contained repro under out_dir (its inputs, expected
  // and got digests, the command that reruns it); returns its folder, "" when
  // the suite writes none. May throw: the run says so and goes on.
  virtual std::string write_repro(const std::string& out_dir, const std::string& group,
                                  const std::string& case_name, const CaseResult& result,
                                  const BackendDescription& backend, uint64_t seed) const {
    (void)out_dir;
    (void)group;
    (void)case_name;
    (void)result;
    (void)backend;
    (void)seed;
    return "";
  }

  // The self checks' group name ("" = none; --skip takes it) and the checks
  // themselves, run only when the run includes them.
  virtual std::string self_check_group() const { return ""; }
  virtual SelfCheckReport self_checks() const { return {}; }

  // Kernel branch probes (harness/probe.h): the suite's probe bank, its
  // table of probe files (paths from source_root) and the source tree they
  // are in (where a coverage report looks for them; "" = the current folder).
  virtual uint32_t probe_bank() const { return 0; }
  virtual std::vector<std::string> probe_files() const { return {}; }
  virtual std::string source_root() const { return ""; }
};

}  // namespace nvh
