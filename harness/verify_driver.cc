#include "harness/verify_driver.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "harness/isolation.h"
#include "harness/junit.h"
#include "harness/lcov_trace.h"
#include "harness/manifest.h"
#include "harness/probe_counts.h"
#include "harness/progress.h"
#include "harness/route_gate.h"
#include "harness/route_record.h"

namespace nvh {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::ok:
      return "OK";
    case Outcome::fail:
      return "FAIL";
    case Outcome::not_supported:
      return "NOT_SUPPORTED";
    case Outcome::skipped:
      return "SKIPPED";
  }
  return "?";
}

std::optional<Outcome> parse_outcome(const std::string& name) {
  for (Outcome o : {Outcome::ok, Outcome::fail, Outcome::not_supported, Outcome::skipped}) {
    if (name == outcome_name(o)) return o;
  }
  return std::nullopt;
}

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

struct Tally {
  std::map<Outcome, int> counts;
  std::vector<std::string> failures;  // "name: detail"
  void add(Outcome o, const std::string& name, const std::string& detail) {
    ++counts[o];
    if (o == Outcome::fail) failures.push_back(name + ": " + detail);
  }
};

JUnitCase junit_case(const std::string& name, const std::string& group, Outcome o,
                     const std::string& detail, double seconds) {
  JUnitCase c{name, group, JUnitCase::Result::passed, "", seconds};
  if (o == Outcome::fail) c.result = JUnitCase::Result::failed;
  if (o == Outcome::not_supported || o == Outcome::skipped) c.result = JUnitCase::Result::skipped;
  if (o != Outcome::ok) c.message = std::string(outcome_name(o)) + ": " + detail;
  return c;
}

Outcome outcome_named(const std::string& name) {
  if (const auto o = parse_outcome(name)) return *o;
  throw std::runtime_error("verify: a worker reported outcome \"" + name +
                           "\", which is none of the four");
}

// ---------------------------------------------------------------------------
// Results and backend descriptions as JSON, between workers and this process
// and in the files a merge reads.

json to_json(const CaseResult& r) {
  return json{{"outcome", outcome_name(r.outcome)},
              {"detail", r.detail},
              {"route", r.route},
              {"digest", r.digest},
              {"evidence", r.evidence},
              {"seconds", r.seconds}};
}

CaseResult result_from(const json& j) {
  CaseResult r;
  r.outcome = outcome_named(j.at("outcome").get<std::string>());
  r.detail = j.at("detail").get<std::string>();
  r.route = j.at("route").get<std::string>();
  r.digest = j.at("digest").get<std::string>();
  r.evidence = j.at("evidence").get<std::string>();
  r.seconds = j.at("seconds").get<double>();
  return r;
}

json to_json(const BackendDescription& d) {
  return json{{"name", d.name}, {"arch", d.arch},   {"device_name", d.device_name},
              {"host", d.host}, {"gates", d.gates}, {"context", d.context}};
}

BackendDescription description_from(const json& j) {
  return {j.at("name").get<std::string>(),        j.at("arch").get<std::string>(),
          j.at("device_name").get<std::string>(), j.at("host").get<bool>(),
          j.at("gates").get<HardwareGates>(),     j.at("context").get<std::string>()};
}

BackendDescription describe_backend(const OperatorSuite& suite, const Backend& backend) {
  return {backend.name(),
          backend.arch(),
          backend.caps().device_name,
          backend.kind() == BackendKind::host,
          suite.hardware_gates(backend),
          suite.describe(backend)};
}

// Makes the backend inside its one task, so that a backend that cannot be
// made fails the task with its own message (e.g. "no CUDA device").
class DescribeWorker : public TaskWorker {
 public:
  DescribeWorker(const OperatorSuite& suite, std::function<std::shared_ptr<Backend>()> make)
      : suite_(suite), make_(std::move(make)) {}
  std::string run(std::size_t) override {
    return to_json(describe_backend(suite_, *make_())).dump();
  }

 private:
  const OperatorSuite& suite_;
  std::function<std::shared_ptr<Backend>()> make_;
};

// ---------------------------------------------------------------------------
// The plan: every case as one task, group by group, in the order they run.
// Built in this process before any worker starts; workers inherit it.

struct Task {
  std::size_t group;  // index in Plan::groups
  std::size_t index;  // the case's index in its group
};

struct Plan {
  std::vector<CaseGroup> groups;   // those that run, in order
  std::vector<bool> family;        // per group: one of the suite's families
  std::vector<CaseGroup> skipped;  // groups this backend cannot run (skipped_why)
  std::vector<Task> tasks;
  const std::string& case_name(const Task& t) const { return groups[t.group].cases[t.index]; }
  std::string key(const Task& t) const { return groups[t.group].name + "/" + case_name(t); }
};

void add_group(Plan& plan, CaseGroup group, bool family) {
  if (!group.skipped_why.empty()) {
    plan.skipped.push_back(std::move(group));
    return;
  }
  const std::size_t index = plan.groups.size();
  for (std::size_t i = 0; i < group.cases.size(); ++i) plan.tasks.push_back({index, i});
  plan.groups.push_back(std::move(group));
  plan.family.push_back(family);
}

// Leaves out the cases the test-only filter refuses (examples stay first).
CaseGroup filtered(CaseGroup group, const VerifyOptions& o) {
  if (!o.case_filter) return group;
  std::vector<std::string> kept;
  std::size_t examples = 0;
  for (std::size_t i = 0; i < group.cases.size(); ++i) {
    if (!o.case_filter(group.name, group.cases[i])) continue;
    kept.push_back(group.cases[i]);
    if (i < group.examples) ++examples;
  }
  group.cases = std::move(kept);
  group.examples = examples;
  return group;
}

Plan make_plan(const OperatorSuite& suite, const VerifyOptions& o, int random_cases,
               const BackendDescription& backend) {
  Plan plan;
  for (const std::string& f : suite.family_names()) {
    if (!o.families.empty() && !contains(o.families, f)) continue;
    add_group(plan, filtered(suite.family_group(f, random_cases, o.seed), o), true);
  }
  for (const CaseGroup& g : suite.other_groups(backend)) {
    if (contains(o.skip, g.name)) continue;
    add_group(plan, filtered(g, o), false);
  }
  return plan;
}

std::pair<std::string, std::string> split_key(const std::string& key) {
  const std::size_t slash = key.find('/');
  if (slash == std::string::npos) {
    throw std::invalid_argument("check_case_key: key = " + key +
                                ": no '/': name the case as manifest.json keys it, GROUP/CASE");
  }
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// --case: the named cases only, grouped as a whole run groups them (each
// group's cases together, groups in the order first named).
Plan make_case_plan(const OperatorSuite& suite, const VerifyOptions& o,
                    const BackendDescription& backend) {
  const std::vector<std::string> families = suite.family_names();
  const std::vector<CaseGroup> others = suite.other_groups(backend);
  std::vector<CaseGroup> named;
  for (const std::string& key : o.cases) {
    const auto [group, name] = split_key(key);
    auto g = std::find_if(named.begin(), named.end(),
                          [&, &group = group](const CaseGroup& c) { return c.name == group; });
    if (g == named.end()) {
      CaseGroup made{group, {}, 0, "", ""};
      for (const CaseGroup& other : others) {
        if (other.name == group) {
          made.title = other.title;
          made.skipped_why = other.skipped_why;
        }
      }
      g = named.insert(named.end(), made);
    }
    g->cases.push_back(name);
  }
  Plan plan;
  for (CaseGroup& g : named) {
    const bool family = contains(families, g.name);
    add_group(plan, std::move(g), family);
  }
  return plan;
}

// ---------------------------------------------------------------------------
// The worker side: runs one task and says what happened, as JSON.

// The kernel probes of the suite's bank this worker counted, as
// [[file, line, taken, not_taken], ...].
std::string probe_counts_json(const OperatorSuite& suite, const Backend& backend) {
  const auto which =
      backend.kind() == BackendKind::host ? probe::Counters::host : probe::Counters::device;
  json sites = json::array();
  for (const probe::SiteCount& c : probe::read_counts(which)) {
    if (c.bank == suite.probe_bank()) sites.push_back({c.file, c.line, c.taken, c.not_taken});
  }
  return sites.dump();
}

class VerifyWorker : public TaskWorker {
 public:
  // `mine`: the plan's tasks this run runs, task j of the worker being plan task mine[j].
  VerifyWorker(const OperatorSuite& suite, std::shared_ptr<Backend> backend, const Plan& plan,
               const VerifyOptions& o, const std::vector<std::size_t>& mine)
      : suite_(suite), backend_(std::move(backend)), plan_(plan), o_(o), mine_(mine) {
    if (!o_.device_coverage.empty()) probe::reset_counts();  // this worker's counts only
  }

  std::string run(std::size_t j) override {
    const Task& t = plan_.tasks.at(mine_.at(j));
    const std::string& group = plan_.groups[t.group].name;
    const std::string& name = plan_.case_name(t);
    RecordContext context(group, name);
    const auto start = Clock::now();
    if (o_.before_case) o_.before_case(group, name);
    CaseResult r = suite_.run_case(*backend_, group, name);
    r.seconds = seconds_since(start);
    return to_json(r).dump();
  }

  std::string finish() override {
    return o_.device_coverage.empty() ? "" : probe_counts_json(suite_, *backend_);
  }

 private:
  const OperatorSuite& suite_;
  std::shared_ptr<Backend> backend_;
  const Plan& plan_;
  const VerifyOptions& o_;
  const std::vector<std::size_t>& mine_;
};

// ---------------------------------------------------------------------------
// This process's side: each task's result as it arrives, in plan order; a
// group is judged and recorded once its last task has arrived.

class Collector {
 public:
  Collector(const OperatorSuite& suite, const Plan& plan, const VerifyOptions& o,
            const BackendDescription& backend, std::ostream& out, Tally& tally,
            std::vector<JUnitSuite>& suites, Manifest& manifest)
      : suite_(suite),
        plan_(plan),
        o_(o),
        backend_(backend),
        out_(out),
        tally_(tally),
        suites_(suites),
        manifest_(manifest) {}

  void start() {
    if (!plan_.tasks.empty()) begin_group(0);
  }

  void on_task(std::size_t index, const TaskOutcome& o) {
    std::optional<CaseResult> r;
    if (o.returned) {
      r = result_from(json::parse(o.result));
    } else {
      r = CaseResult{};  // a task that threw or crashed is a FAIL of its case
      r->outcome = Outcome::fail;
      r->detail = o.failure;
    }
    handle(index, std::move(r));
  }

  // A task another shard runs: nothing is recorded for it, but its group still
  // begins and ends here, so the groups of a shard read as those of a whole run.
  void on_absent(std::size_t index) { handle(index, std::nullopt); }

  // Off in a shard, for --case and for a filtered run: the groups' claims over
  // all their cases are judged over every case, which only a whole run (or a
  // merge) has.
  void set_whole(bool whole, std::string why_not) {
    whole_ = whole;
    not_whole_why_ = std::move(why_not);
  }
  // --case: each case prints its line (outcome and digest), no group line.
  void set_case_lines(bool on) { case_lines_ = on; }
  // Whose run a repro names. Only a run sets it and so writes repros, not a
  // merge (its shards wrote theirs).
  void set_repros(bool on) { write_repros_ = on; }
  const std::vector<std::string>& repros() const { return repros_; }

  void on_finish(const std::string& counts) {
    if (counts.empty()) return;
    for (const json& c : json::parse(counts)) {
      auto& [taken, not_taken] = probes_[{c.at(0).get<uint32_t>(), c.at(1).get<uint32_t>()}];
      taken += c.at(2).get<uint64_t>();
      not_taken += c.at(3).get<uint64_t>();
    }
  }

  // Groups this backend cannot run still say so.
  void finish() {
    for (const CaseGroup& g : plan_.skipped) {
      tally_.add(Outcome::skipped, g.name, g.skipped_why);
      suites_.push_back({g.name,
                         {junit_case(g.title.empty() ? g.name : g.title, g.name, Outcome::skipped,
                                     g.skipped_why, 0)}});
      out_ << g.name << ": SKIPPED: " << g.skipped_why << "\n";
    }
  }

  std::vector<probe::SiteCount> probe_counts() const {
    std::vector<probe::SiteCount> sites;
    for (const auto& [site, counts] : probes_)
      sites.push_back({suite_.probe_bank(), site.first, site.second, counts.first, counts.second});
    return sites;
  }

 private:
  void handle(std::size_t index, std::optional<CaseResult> r) {
    const Task& t = plan_.tasks[index];
    results_.push_back(std::move(r));
    if (t.index + 1 == plan_.groups[t.group].cases.size()) end_group(t.group);
    if (index + 1 < plan_.tasks.size()) {
      const Task& next = plan_.tasks[index + 1];
      if (next.group != t.group) {
        begin_group(index + 1);
      } else {
        progress_->update(next.index, plan_.case_name(next));
      }
    }
  }

  void begin_group(std::size_t first_task) {
    const Task& t = plan_.tasks[first_task];
    const CaseGroup& g = plan_.groups[t.group];
    suites_.push_back({g.name, {}});
    results_.clear();
    progress_.emplace(g.title.empty() ? g.name : g.title, g.cases.size());
    progress_->update(0, plan_.case_name(t));
  }

  void end_group(std::size_t group_index) {
    progress_->finish("done");
    progress_.reset();
    const CaseGroup& g = plan_.groups[group_index];
    std::vector<CaseResult*> present;
    for (auto& r : results_) present.push_back(r ? &*r : nullptr);
    const GroupJudgement judged = suite_.judge_group(g, present, backend_, whole_);
    std::map<Outcome, int> counts;
    for (std::size_t i = 0; i < g.cases.size(); ++i) {
      if (results_[i]) record_case(g, g.cases[i], *results_[i], counts);
    }
    for (const auto& [check, detail] : judged.failures)
      record(Outcome::fail, g.name, check, detail, 0);
    for (const std::string& note : judged.notes) out_ << "  " << g.name << ": " << note << "\n";
    if (case_lines_) return;
    if (!judged.summary.empty()) {
      out_ << judged.summary << "\n";
      return;
    }
    const auto tallied = [&] {
      return "OK " + std::to_string(counts[Outcome::ok]) + ", FAIL " +
             std::to_string(counts[Outcome::fail]) + ", NOT_SUPPORTED " +
             std::to_string(counts[Outcome::not_supported]) + ", SKIPPED " +
             std::to_string(counts[Outcome::skipped]);
    };
    if (!whole_) {
      const int here = counts[Outcome::ok] + counts[Outcome::fail] +
                       counts[Outcome::not_supported] + counts[Outcome::skipped];
      out_ << "  " << g.name << ": " << here << " of its " << g.cases.size()
           << " cases here: " << tallied()
           << "; claims over the whole group not judged: " << not_whole_why_ << "\n";
      return;
    }
    out_ << "  " << g.name << ": " << g.cases.size() << " cases (" << g.examples << " boundary, "
         << g.cases.size() - g.examples << " random): " << tallied()
         << (judged.failures.empty()
                 ? ""
                 : "; " + std::to_string(judged.failures.size()) + " group check(s) FAILED")
         << "\n";
  }

  void record_case(const CaseGroup& g, const std::string& name, const CaseResult& r,
                   std::map<Outcome, int>& counts) {
    ++counts[r.outcome];
    if (!r.digest.empty()) manifest_.cases[g.name + "/" + name] = r.digest;
    record(r.outcome, g.name, name, r.detail, r.seconds);
    if (r.outcome == Outcome::fail) write_repro_of(g.name, name, r);
    if (case_lines_) {
      out_ << "case " << g.name << "/" << name << ": " << outcome_name(r.outcome)
           << (r.detail.empty() ? "" : ": " + r.detail) << ", digest "
           << (r.digest.empty() ? "(none)" : r.digest) << "\n";
    }
  }

  // A case that failed is also listed in the manifest's metadata, so a case
  // that crashed (and has no digest) is not simply absent from it.
  void record(Outcome o, const std::string& group, const std::string& name,
              const std::string& detail, double seconds) {
    tally_.add(o, group + "/" + name, detail);
    suites_.back().cases.push_back(junit_case(name, group, o, detail, seconds));
    if (o == Outcome::fail) manifest_.metadata["fail/" + group + "/" + name] = detail;
  }

  // A repro that cannot be written is said, and the run goes on: the verdicts matter more.
  void write_repro_of(const std::string& group, const std::string& name, const CaseResult& r) {
    if (!write_repros_) return;
    try {
      const std::string folder = suite_.write_repro(o_.out_dir, group, name, r, backend_, o_.seed);
      if (!folder.empty()) repros_.push_back(folder);
    } catch (const std::exception& e) {
      out_ << "  could not write the repro of " << group << "/" << name << ": " << e.what() << "\n";
    }
  }

  const OperatorSuite& suite_;
  const Plan& plan_;
  const VerifyOptions& o_;
  const BackendDescription& backend_;
  std::ostream& out_;
  Tally& tally_;
  std::vector<JUnitSuite>& suites_;
  Manifest& manifest_;

  std::optional<Progress> progress_;
  std::vector<std::optional<CaseResult>> results_;  // of the current group
  std::vector<std::string> repros_;
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint64_t, uint64_t>> probes_;
  bool whole_ = true, case_lines_ = false, write_repros_ = false;
  std::string not_whole_why_;
};

// ---------------------------------------------------------------------------
// The self checks: no backend, so they run in this process. A shard saves
// them in shard.json, and a merge replays them from there.

JUnitSuite record_self_checks(const SelfCheckReport& report, std::ostream& out, Tally& tally) {
  JUnitSuite suite{report.group, {}};
  for (const SelfCheck& c : report.checks) {
    tally.add(c.outcome, report.group + "/" + c.name, c.detail);
    suite.cases.push_back(junit_case(c.name, report.group, c.outcome, c.detail, 0));
  }
  out << report.line;
  return suite;
}

json to_json(const SelfCheckReport& report) {
  json checks = json::array();
  for (const SelfCheck& c : report.checks)
    checks.push_back({c.name, outcome_name(c.outcome), c.detail});
  return json{{"group", report.group}, {"checks", checks}, {"line", report.line}};
}

SelfCheckReport self_checks_from(const json& j) {
  SelfCheckReport report{j.at("group").get<std::string>(), {}, j.at("line").get<std::string>()};
  for (const json& c : j.at("checks"))
    report.checks.push_back({c.at(0).get<std::string>(), outcome_named(c.at(1)), c.at(2)});
  return report;
}

// ---------------------------------------------------------------------------

std::vector<BranchSite> branch_sites(const OperatorSuite& suite,
                                     const std::vector<probe::SiteCount>& counts,
                                     const std::string& root) {
  const std::vector<std::string> files = suite.probe_files();
  std::vector<BranchSite> sites;
  for (const probe::SiteCount& c : counts) {
    const std::string file =
        c.file < files.size() ? files[c.file] : "unknown_probe_file_" + std::to_string(c.file);
    sites.push_back({root + "/" + file, c.line, c.taken, c.not_taken});
  }
  return sites;
}

// The launches the workers appended to the run's route log (none: no file).
std::vector<LaunchRecord> logged_launches(const std::string& route_log) {
  return std::filesystem::exists(route_log) ? read_route_log(route_log)
                                            : std::vector<LaunchRecord>{};
}

// `argument` names the option the folder comes from, for the message.
void make_folder(const std::string& argument, const std::string& dir) {
  if (dir.empty()) return;  // the current folder
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw std::invalid_argument("run_verify: " + argument + " = " + dir +
                                ": cannot create the folder: " + error.message());
  }
}

// The gate over a run's route log, the files, the summary and the exit code:
// the end of a run and of a merge.
int report_run(const OperatorSuite& suite, const VerifyOptions& o, const BackendDescription& info,
               const std::string& route_log, const std::string& not_judged,
               const Collector& collector, Tally& tally, const std::vector<JUnitSuite>& suites,
               const Manifest& manifest, Clock::time_point start, std::ostream& out) {
  // The gate judges the launches of this run only. A run of some families
  // cannot be expected to reach every route: its gate is shown, not judged.
  const GateReport gate =
      evaluate_gate(suite.gate_declaration(), info.gates, logged_launches(route_log));
  RouteRecorder::global().set_log_path("");
  out << "\nroute coverage:\n" << render_gate_text(gate, not_judged);
  if (not_judged.empty() && !gate.passed())
    tally.add(Outcome::fail, "route-coverage-gate", "see the route table");
  std::ofstream(o.out_dir + "/route_gate.txt") << render_gate_text(gate, not_judged);
  std::ofstream(o.out_dir + "/route_gate.json") << render_gate_json(gate, not_judged);
  if (!o.device_coverage.empty()) {  // kernel branch coverage next to the route table
    const std::string root = o.source_root.empty() ? suite.source_root() : o.source_root;
    const std::vector<BranchSite> sites = branch_sites(suite, collector.probe_counts(), root);
    make_folder("device_coverage's folder",
                std::filesystem::path(o.device_coverage).parent_path().string());
    write_lcov_tracefile(o.device_coverage, "probes_" + info.arch, sites);
    out << "\nkernel branch coverage (probes, " << info.arch
        << "): " << render_trace_summary(sites, 20, root + "/") << "wrote " << o.device_coverage
        << "\n";
  }
  if (!collector.repros().empty()) {
    out << "wrote " << collector.repros().size() << " repro folder(s) of failing cases under "
        << o.out_dir << "/repro (each README.txt says how to rerun its case)\n";
  }
  write_junit_xml(suites, o.out_dir + "/junit.xml");
  write_manifest(manifest, o.out_dir + "/manifest.json");
  out << "\nwrote " << o.out_dir << "/junit.xml, " << o.out_dir << "/manifest.json, " << o.out_dir
      << "/routes.jsonl\n";
  out << "summary: OK " << tally.counts[Outcome::ok] << ", FAIL " << tally.counts[Outcome::fail]
      << ", NOT_SUPPORTED " << tally.counts[Outcome::not_supported] << ", SKIPPED "
      << tally.counts[Outcome::skipped] << "; "
      << (!not_judged.empty() ? "gate not judged: " + not_judged
          : gate.passed()     ? std::string("route gate passed")
                              : std::string("route gate FAILED"))
      << "; " << seconds_since(start) << " s\n";
  for (std::size_t i = 0; i < tally.failures.size() && i < 20; ++i)
    out << "  FAIL " << tally.failures[i] << "\n";
  if (tally.failures.size() > 20)
    out << "  ... and " << tally.failures.size() - 20 << " more (see junit.xml)\n";
  return tally.failures.empty() ? 0 : 1;
}

// Appends the run's route log to the log this process had before the run,
// and logs there again.
void pass_launches_on(const std::string& route_log, const std::string& outer_log) {
  if (outer_log.empty()) return;
  RouteRecorder::global().set_log_path(outer_log);
  append_route_log(outer_log, logged_launches(route_log));
}

// Puts back the route log a run replaced, when the run ends early (it threw).
struct OuterLogKept {
  std::string path;
  ~OuterLogKept() {
    if (RouteRecorder::global().log_path() != path) RouteRecorder::global().set_log_path(path);
  }
};

// Why the gate is not judged over a run of some cases: "" for a whole run.
std::string filter_why(const OperatorSuite& suite, const VerifyOptions& o, const Plan& plan) {
  if (!o.families.empty()) {
    std::size_t families = 0;
    for (bool f : plan.family) families += f;
    return "--family selects " + std::to_string(families) + " of " +
           std::to_string(suite.family_names().size()) + " families";
  }
  if (o.case_filter) return "a case filter leaves cases out";
  return "";
}

// ---------------------------------------------------------------------------
// What a run leaves for `merge`: shard.json and results.jsonl.

constexpr const char* kShardFormat = "nvh.verify.shard.v2";

// The fields every shard of one run must share, and merge checks.
const char* const kSharedFields[] = {"operator", "seed",    "random_cases", "families",
                                     "skip",     "backend", "tasks"};

json shard_meta(const OperatorSuite& suite, const VerifyOptions& o, int random_cases,
                const BackendDescription& backend, std::size_t tasks, const json& self_checks) {
  return json{{"format", kShardFormat},
              {"operator", suite.name()},
              {"shard", {o.shard.index, o.shard.count}},
              {"seed", o.seed},
              {"random_cases", random_cases},
              {"families", o.families},
              {"skip", o.skip},
              {"cases", o.cases},
              {"backend", to_json(backend)},
              {"tasks", tasks},
              {"self_checks", self_checks}};
}

std::string result_line(std::size_t task, const std::string& key, const TaskOutcome& r) {
  return json{{"task", task},
              {"key", key},
              {"returned", r.returned},
              {"result", r.result},
              {"failure", r.failure}}
      .dump();
}

json read_json_file(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("run_merge: " + path + ": cannot be read: " + what);
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::invalid_argument("run_merge: " + path + ": not JSON: " + e.what());
  }
}

int default_random_cases(const VerifyOptions& o, bool host) {
  return o.random_cases >= 0 ? o.random_cases : host ? 25 : 200;
}

void check_options(const OperatorSuite& suite, const VerifyOptions& o) {
  if (o.out_dir.empty())
    throw std::invalid_argument("run_verify: out_dir = \"\": must name a folder");
  const std::vector<std::string> families = suite.family_names();
  for (const std::string& f : o.families) {
    if (!contains(families, f)) {
      throw std::invalid_argument("run_verify: family = " + f + ": " + suite.name() +
                                  " has no such family (its families: " + joined(families) + ")");
    }
  }
  const std::vector<std::string> skippable = suite.skippable();
  for (const std::string& s : o.skip) {
    if (!contains(skippable, s)) {
      throw std::invalid_argument("run_verify: skip = " + s + ": " + suite.name() +
                                  " cannot skip that (it can skip: " + joined(skippable) + ")");
    }
  }
  for (const std::string& key : o.cases) check_case_key(suite, key);  // before any backend is made
}

// The backend, described by a worker (in process: by the one backend).
BackendDescription describe_in_worker(const OperatorSuite& suite,
                                      const std::function<std::shared_ptr<Backend>()>& backend,
                                      Isolation isolation) {
  std::string description;
  run_tasks(
      1, [&] { return std::make_unique<DescribeWorker>(suite, backend); }, isolation,
      [&](std::size_t, const TaskOutcome& d) {
        const std::string threw = "threw: ";  // the backend's own message, as in process
        if (d.failure.rfind(threw, 0) == 0)
          throw BackendUnavailable(d.failure.substr(threw.size()));
        if (!d.returned)
          throw std::runtime_error("verify: the worker making the backend " + d.failure);
        description = d.result;
      });
  return description_from(json::parse(description));
}

}  // namespace

void check_case_key(const OperatorSuite& suite, const std::string& key) {
  const auto [group, name] = split_key(key);
  suite.check_case(group, name);
}

std::vector<std::string> planned_case_keys(const OperatorSuite& suite, const VerifyOptions& o,
                                           const BackendDescription& backend) {
  const Plan plan = o.cases.empty()
                        ? make_plan(suite, o, default_random_cases(o, backend.host), backend)
                        : make_case_plan(suite, o, backend);
  std::vector<std::string> keys;
  for (const Task& t : plan.tasks) keys.push_back(plan.key(t));
  return keys;
}

int run_verify(const OperatorSuite& suite, const BackendFactory& make_backend,
               const VerifyOptions& options, std::ostream& out) {
  const auto start = Clock::now();
  check_options(suite, options);
  const bool case_mode = !options.cases.empty();
  const VerifyOptions& o = options;
  make_folder("out_dir", o.out_dir);
  // Workers append their launches here (each record one O_APPEND write, so
  // they interleave whole lines); the gate reads the file back.
  const std::string route_log = o.out_dir + "/routes.jsonl";
  std::filesystem::remove(route_log);
  std::filesystem::remove_all(o.out_dir +
                              "/repro");  // a previous run's failures are not this run's
  // A run inside a process that logs its launches (a test binary under ctest,
  // whose log the route gate reads) passes its own launches on at the end.
  const std::string outer_log = RouteRecorder::global().log_path();
  const OuterLogKept kept{outer_log};
  RouteRecorder::global().clear();
  RouteRecorder::global().set_log_path(route_log);

  // In process, the one backend serves the description and every task.
  const Isolation isolation = o.isolate ? Isolation::forked : Isolation::in_process;
  std::shared_ptr<Backend> shared = o.isolate ? nullptr : std::shared_ptr<Backend>(make_backend());
  auto backend_here = [&]() -> std::shared_ptr<Backend> {
    return shared ? shared : make_backend();
  };
  const BackendDescription info = describe_in_worker(suite, backend_here, isolation);

  const int random_cases = default_random_cases(o, info.host);
  out << suite.tool() << " verify on " << info.name << " (" << info.arch << ", " << info.device_name
      << "), seed " << o.seed << (o.isolate ? "" : ", in process (--no-fork)")
      << (o.shard.sharded()
              ? ", shard " + o.shard.text() + " (tasks i with i % " +
                    std::to_string(o.shard.count) + " == " + std::to_string(o.shard.index) + ")"
              : "")
      << (case_mode ? ", " + std::to_string(o.cases.size()) + " named cases (--case)" : "") << "\n";

  Tally tally;
  std::vector<JUnitSuite> suites;
  Manifest manifest;
  manifest.backend = info.name;
  manifest.arch = info.arch;
  manifest.tool = suite.tool() + " verify";
  json self_check_results;  // null unless this run ran the self checks
  if (!case_mode) {
    const std::string self = suite.self_check_group();
    if (!self.empty() && contains(o.skip, self)) {
      out << self << ": skipped (--skip " << self << ")\n";
    } else if (!self.empty() && o.shard.index == 0) {
      const SelfCheckReport report = suite.self_checks();
      suites.push_back(record_self_checks(report, out, tally));
      self_check_results = to_json(report);
    }
    for (const std::string& s : o.skip) {
      if (s != self) out << s << ": skipped (--skip " << s << ")\n";
    }
  }

  const Plan plan =
      case_mode ? make_case_plan(suite, o, info) : make_plan(suite, o, random_cases, info);
  std::vector<std::size_t> mine;  // the plan's tasks this shard runs
  for (std::size_t i = 0; i < plan.tasks.size(); ++i) {
    if (o.shard.owns(i)) mine.push_back(i);
  }
  const std::string shard_note = "shard " + o.shard.text() + ": gate judged after merge";
  Collector collector(suite, plan, o, info, out, tally, suites, manifest);
  if (o.shard.sharded()) collector.set_whole(false, shard_note);
  if (o.case_filter) collector.set_whole(false, "a case filter leaves cases out");
  if (case_mode) {
    collector.set_whole(false, "--case");
    collector.set_case_lines(true);
  }
  collector.set_repros(true);
  collector.start();
  std::ofstream results(o.out_dir + "/results.jsonl");
  std::size_t seen = 0;  // the plan's tasks the collector has been shown
  run_tasks(
      mine.size(),
      [&] { return std::make_unique<VerifyWorker>(suite, backend_here(), plan, o, mine); },
      isolation,
      [&](std::size_t j, const TaskOutcome& r) {
        for (; seen < mine[j]; ++seen) collector.on_absent(seen);
        results << result_line(mine[j], plan.key(plan.tasks[mine[j]]), r) << "\n" << std::flush;
        collector.on_task(seen++, r);
      },
      [&](const std::string& counts) { collector.on_finish(counts); });
  for (; seen < plan.tasks.size(); ++seen) collector.on_absent(seen);
  collector.finish();
  std::ofstream(o.out_dir + "/shard.json")
      << shard_meta(suite, o, random_cases, info, plan.tasks.size(), self_check_results).dump(2)
      << "\n";

  const std::string not_judged = case_mode
                                     ? "--case names " + std::to_string(o.cases.size()) + " cases"
                                 : o.shard.sharded() ? shard_note
                                                     : filter_why(suite, o, plan);
  const int rc = report_run(suite, o, info, route_log, not_judged, collector, tally, suites,
                            manifest, start, out);
  pass_launches_on(route_log, outer_log);
  return rc;
}

int run_merge(const OperatorSuite& suite, const MergeOptions& m, std::ostream& out) {
  const auto start = Clock::now();
  if (m.out_dir.empty())
    throw std::invalid_argument("run_merge: out_dir = \"\": must name a folder");
  if (m.shard_dirs.empty()) {
    throw std::invalid_argument(
        "run_merge: shard_dirs: none given: name the --out folder of every shard");
  }
  // Every shard's folder, by its index.
  struct ShardRun {
    std::string dir;
    json meta;
  };
  std::vector<ShardRun> given;
  for (const std::string& dir : m.shard_dirs) {
    std::error_code ignored;
    if (std::filesystem::equivalent(dir, m.out_dir, ignored)) {
      throw std::invalid_argument("run_merge: " + dir +
                                  ": is also the merge's --out; merge into another folder");
    }
    json meta = read_json_file(dir + "/shard.json", "not the --out folder of a verify run");
    if (meta.value("format", "") != kShardFormat) {
      throw std::invalid_argument("run_merge: " + dir + "/shard.json: format " +
                                  meta.value("format", "(none)") + ", expected " + kShardFormat);
    }
    if (meta.value("operator", "") != suite.name()) {
      throw std::invalid_argument("run_merge: " + dir + "/shard.json: operator " +
                                  meta.value("operator", "(none)") + ", this is " + suite.name() +
                                  "'s merge");
    }
    if (!meta.at("cases").empty()) {
      throw std::invalid_argument("run_merge: " + dir +
                                  ": a --case run, not a shard of a whole run");
    }
    given.push_back({dir, std::move(meta)});
  }
  const int count = given[0].meta.at("shard").at(1);
  std::vector<const ShardRun*> by_index(static_cast<std::size_t>(count), nullptr);
  for (const ShardRun& s : given) {
    for (const char* field : kSharedFields) {
      if (s.meta.at(field) != given[0].meta.at(field)) {
        throw std::invalid_argument("run_merge: " + s.dir + ": " + field + " = " +
                                    s.meta.at(field).dump() + ", but " + given[0].dir + " has " +
                                    given[0].meta.at(field).dump() +
                                    ": the shards of one run share it");
      }
    }
    const int index = s.meta.at("shard").at(0), n = s.meta.at("shard").at(1);
    if (n != count) {
      throw std::invalid_argument("run_merge: " + s.dir + ": shard " + Shard{index, n}.text() +
                                  ", but " + given[0].dir + " is one of " + std::to_string(count) +
                                  " shards");
    }
    const ShardRun*& slot = by_index[static_cast<std::size_t>(index)];
    if (slot) {
      throw std::invalid_argument("run_merge: " + s.dir + ": shard " + Shard{index, n}.text() +
                                  " given twice (" + slot->dir + " is it too)");
    }
    slot = &s;
  }
  for (int i = 0; i < count; ++i) {
    if (!by_index[static_cast<std::size_t>(i)]) {
      throw std::invalid_argument("run_merge: shard " + Shard{i, count}.text() +
                                  " is missing: merge every shard of the run (given " +
                                  std::to_string(given.size()) + ")");
    }
  }

  // The run's plan, as each shard made it.
  const json& meta = given[0].meta;
  VerifyOptions o;
  o.out_dir = m.out_dir;
  o.seed = meta.at("seed");
  o.families = meta.at("families").get<std::vector<std::string>>();
  o.skip = meta.at("skip").get<std::vector<std::string>>();
  const int random_cases = meta.at("random_cases");
  o.random_cases = random_cases;
  const BackendDescription info = description_from(meta.at("backend"));
  const Plan plan = make_plan(suite, o, random_cases, info);
  if (plan.tasks.size() != meta.at("tasks").get<std::size_t>()) {
    throw std::invalid_argument("run_merge: the shards ran " + meta.at("tasks").dump() +
                                " tasks, this binary plans " + std::to_string(plan.tasks.size()) +
                                " for their options: merge with the binary that ran them");
  }

  // Each task's outcome from the shard that ran it: no task twice, none missing.
  std::vector<std::optional<TaskOutcome>> outcomes(plan.tasks.size());
  std::vector<std::set<std::string>> keys_of(static_cast<std::size_t>(count));  // each shard's keys
  for (int i = 0; i < count; ++i) {
    const ShardRun& s = *by_index[static_cast<std::size_t>(i)];
    const Shard shard{i, count};
    const std::string path = s.dir + "/results.jsonl";
    std::ifstream in(path);
    if (!in) throw std::invalid_argument("run_merge: " + path + ": cannot be read");
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      const std::string where = "run_merge: " + path + ":" + std::to_string(number) + ": ";
      json r;
      try {
        r = json::parse(line);
      } catch (const json::exception& e) {
        throw std::invalid_argument(where + "not JSON: " + e.what());
      }
      const std::size_t task = r.at("task");
      const std::string key = r.at("key");
      if (task >= plan.tasks.size() || !shard.owns(task)) {
        throw std::invalid_argument(where + "task " + std::to_string(task) + " (" + key +
                                    ") is not one of shard " + shard.text() + "'s");
      }
      const std::string planned = plan.key(plan.tasks[task]);
      if (key != planned) {
        throw std::invalid_argument(where + "task " + std::to_string(task) + " is " + key +
                                    ", this binary plans " + planned +
                                    ": merge with the binary that ran the shards");
      }
      if (outcomes[task])
        throw std::invalid_argument(where + "case " + key + " (task " + std::to_string(task) +
                                    ") twice");
      outcomes[task] = TaskOutcome{r.at("returned").get<bool>(), r.at("result").get<std::string>(),
                                   r.at("failure").get<std::string>()};
      keys_of[static_cast<std::size_t>(i)].insert(key);
    }
  }
  for (std::size_t t = 0; t < plan.tasks.size(); ++t) {
    if (!outcomes[t]) {
      const ShardRun& s = *by_index[t % static_cast<std::size_t>(count)];
      throw std::invalid_argument("run_merge: " + s.dir + " has no result for " +
                                  plan.key(plan.tasks[t]) + " (task " + std::to_string(t) +
                                  "): did that shard finish?");
    }
  }

  // The shards' manifests, united: each names only its own cases, and a case
  // (a repeated draw) in two of them has one digest.
  std::map<std::string, std::string> united;
  for (int i = 0; i < count; ++i) {
    const ShardRun& s = *by_index[static_cast<std::size_t>(i)];
    const Manifest part = read_manifest(s.dir + "/manifest.json");
    for (const auto& [key, digest] : part.cases) {
      if (!keys_of[static_cast<std::size_t>(i)].count(key)) {
        throw std::invalid_argument("run_merge: " + s.dir + "/manifest.json: case " + key +
                                    " is not one of shard " + Shard{i, count}.text() +
                                    "'s (overlapping shards?)");
      }
      const auto [it, added] = united.emplace(key, digest);
      if (!added && it->second != digest) {
        throw std::invalid_argument("run_merge: case " + key + " has digest " + digest + " in " +
                                    s.dir + " and " + it->second + " in another shard");
      }
    }
  }

  // The route logs, concatenated in shard order.
  make_folder("out_dir", o.out_dir);
  const std::string route_log = o.out_dir + "/routes.jsonl";
  {
    std::ofstream log(route_log, std::ios::binary | std::ios::trunc);
    for (const ShardRun* s : by_index) {
      const std::string part = s->dir + "/routes.jsonl";
      if (std::filesystem::exists(part)) log << std::ifstream(part, std::ios::binary).rdbuf();
    }
    if (!log) throw std::runtime_error("run_merge: " + route_log + ": cannot be written");
  }

  // The whole run replayed from the shards' results, judged as one run is.
  out << suite.tool() << " merge of " << count << " shard(s) of verify on " << info.name << " ("
      << info.arch << ", " << info.device_name << "), seed " << o.seed << "\n";
  Tally tally;
  std::vector<JUnitSuite> suites;
  Manifest manifest;
  manifest.backend = info.name;
  manifest.arch = info.arch;
  manifest.tool = suite.tool() + " verify";
  const json& self_checks = by_index[0]->meta.at("self_checks");
  if (!self_checks.is_null())
    suites.push_back(record_self_checks(self_checks_from(self_checks), out, tally));
  for (const std::string& s : o.skip) out << s << ": skipped (--skip " << s << ")\n";
  Collector collector(suite, plan, o, info, out, tally, suites, manifest);
  collector.start();
  std::ofstream results(o.out_dir + "/results.jsonl");
  for (std::size_t t = 0; t < plan.tasks.size(); ++t) {
    results << result_line(t, plan.key(plan.tasks[t]), *outcomes[t]) << "\n";
    collector.on_task(t, *outcomes[t]);
  }
  collector.finish();
  if (united != manifest.cases) {
    throw std::invalid_argument(
        "run_merge: the shards' manifest.json files and their results.jsonl disagree (" +
        std::to_string(united.size()) + " against " + std::to_string(manifest.cases.size()) +
        " digests)");
  }
  // The merged folder reads as one whole run's (shard 0/1), so it can be merged again.
  std::ofstream(o.out_dir + "/shard.json")
      << shard_meta(suite, o, random_cases, info, plan.tasks.size(), self_checks).dump(2) << "\n";
  return report_run(suite, o, info, route_log, filter_why(suite, o, plan), collector, tally, suites,
                    manifest, start, out);
}

}  // namespace nvh
