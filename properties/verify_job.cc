#include "properties/verify_job.h"

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
#include "kernels/dispatch.h"
#include "kernels/nvfp4_matmul.h"
#include "kernels/probes.h"
#include "properties/case_lists.h"
#include "properties/families.h"
#include "properties/golden_manifests.h"
#include "properties/model_prefill.h"
#include "properties/repro.h"
#include "properties/route_coverage.h"
#include "properties/verify_case.h"
#include "reference/toolkit_crosscheck.h"

namespace nvfp4 {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Tally {
  std::map<Outcome, int> counts;
  std::vector<std::string> failures;  // "name: detail"
  void add(Outcome o, const std::string& name, const std::string& detail) {
    ++counts[o];
    if (o == Outcome::fail) failures.push_back(name + ": " + detail);
  }
};

nvh::JUnitCase junit_case(const std::string& name, const std::string& group, Outcome o,
                          const std::string& detail, double seconds) {
  nvh::JUnitCase c{name, group, nvh::JUnitCase::Result::passed, "", seconds};
  if (o == Outcome::fail) c.result = nvh::JUnitCase::Result::failed;
  if (o == Outcome::not_supported || o == Outcome::skipped)
    c.result = nvh::JUnitCase::Result::skipped;
  if (o != Outcome::ok) c.message = std::string(outcome_name(o)) + ": " + detail;
  return c;
}

Outcome parse_outcome(const std::string& name) {
  for (Outcome o : {Outcome::ok, Outcome::fail, Outcome::not_supported, Outcome::skipped}) {
    if (name == outcome_name(o)) return o;
  }
  throw std::runtime_error("verify: a worker reported outcome \"" + name +
                           "\", which is none of the four");
}

// Level 1: the format itself, against the toolkit's own conversions. It needs
// no backend, so it runs in this process.
// `saved` (may be null) receives each check as [name, outcome, detail] and the
// line printed, for shard.json: a merge replays level 1 from it.
nvh::JUnitSuite verify_primitives(std::ostream& out, Tally& tally, json* saved = nullptr) {
  nvh::JUnitSuite suite{"primitives", {}};
  const auto start = Clock::now();
  const ref::PrimitiveReport report = ref::check_primitives();
  for (const ref::PrimitiveCheck& c : report.checks) {
    const Outcome o = c.mismatches ? Outcome::fail : Outcome::ok;
    std::string detail =
        std::to_string(c.mismatches) + " mismatches of " + std::to_string(c.compared);
    for (const auto& line : c.first_mismatches) detail += "; " + line;
    tally.add(o, "primitives/" + c.name, detail);
    suite.cases.push_back(junit_case(c.name, "primitives", o, detail, 0));
    if (saved) (*saved)["checks"].push_back({c.name, outcome_name(o), detail});
  }
  std::ostringstream line;
  line << "level 1, primitives: " << report.checks.size()
       << " checks against the CUDA toolkit's conversions, " << report.total_mismatches()
       << " mismatches (" << seconds_since(start) << " s)\n";
  out << line.str();
  if (saved) (*saved)["line"] = line.str();
  return suite;
}

// ---------------------------------------------------------------------------
// What this process knows of the backend: the workers make it, this process
// never does (a CUDA context does not survive fork), so one worker describes it.

struct BackendInfo {
  std::string name, arch, device_name;
  bool host = true;
  nvh::HardwareGates gates;
  AimContext aims;  // what the families' aims are judged against (families.h)
};

std::string describe(const nvh::Backend& backend) {
  return json{{"name", backend.name()},
              {"arch", backend.arch()},
              {"device_name", backend.caps().device_name},
              {"host", backend.kind() == nvh::BackendKind::host},
              {"gates", hardware_gates(backend)},
              {"multiprocessors", backend.caps().multiprocessors},
              {"native_missing", aim_context(backend).native_missing}}
      .dump();
}

BackendInfo parse_info(const std::string& text) {
  const json j = json::parse(text);
  BackendInfo info{j.at("name").get<std::string>(),         j.at("arch").get<std::string>(),
                   j.at("device_name").get<std::string>(),  j.at("host").get<bool>(),
                   j.at("gates").get<nvh::HardwareGates>(), {}};
  info.aims.kind = info.host ? nvh::BackendKind::host : nvh::BackendKind::cuda;
  info.aims.multiprocessors = j.at("multiprocessors").get<int>();
  info.aims.native_missing = j.at("native_missing").get<std::string>();
  return info;
}

// Makes the backend inside its one task, so that a backend that cannot be
// made fails the task with its own message (e.g. "no CUDA device").
class DescribeWorker : public nvh::TaskWorker {
 public:
  explicit DescribeWorker(std::function<std::shared_ptr<nvh::Backend>()> make)
      : make_(std::move(make)) {}
  std::string run(std::size_t) override { return describe(*make_()); }

 private:
  std::function<std::shared_ptr<nvh::Backend>()> make_;
};

// ---------------------------------------------------------------------------
// The plan: every case of levels 2 to 4 as one task, in the order they run.
// Built in this process before any worker starts; workers inherit it.

enum class Level { family, model, golden };

struct Task {
  Level level;
  std::size_t group;  // the family's index in Plan::families; 0 for the model and golden levels
  std::size_t index;  // the case's index in its group
  CaseSpec spec;      // family and golden cases
  ModelRoute model;   // model level
};

struct FamilyRun {
  const Family* family;
  std::size_t examples = 0, cases = 0;
};

// The golden manifest a backend's seed8 digests must equal, or why there is none.
struct Golden {
  std::string source;  // "properties/golden/seed8.host.json"; empty: none
  std::string text;
  std::string skipped_why;
};

Golden golden_for(const BackendInfo& info) {
  if (info.host) return {"properties/golden/seed8.host.json", kGoldenSeed8Host, ""};
  if (info.arch == "sm_90") return {"properties/golden/seed8.h200.json", kGoldenSeed8H200, ""};
  return {"", "",
          "the golden GPU manifest (properties/golden/seed8.h200.json) is for the H200 (sm_90) "
          "only; this device is " +
              info.arch};
}

struct Plan {
  std::vector<FamilyRun> families;
  std::vector<Task> tasks;
  std::size_t model_tasks = 0, golden_tasks = 0;
};

Plan make_plan(const VerifyOptions& o, int random_cases, const Golden& golden) {
  Plan plan;
  for (const Family& f : all_families()) {
    if (!o.families.empty() &&
        std::find(o.families.begin(), o.families.end(), f.name) == o.families.end())
      continue;
    std::vector<CaseSpec> cases = f.examples;
    for (const CaseSpec& s : sample_family(f, random_cases, o.seed)) cases.push_back(s);
    const std::size_t group = plan.families.size();
    plan.families.push_back({&f, f.examples.size(), cases.size()});
    for (std::size_t i = 0; i < cases.size(); ++i)
      plan.tasks.push_back({Level::family, group, i, cases[i], {}});
  }
  if (o.model) {
    const std::vector<ModelRoute> routes = model_routes();
    for (std::size_t r = 0; r < routes.size(); ++r)
      plan.tasks.push_back({Level::model, 0, r, {}, routes[r]});
    plan.model_tasks = routes.size();
  }
  if (o.golden && !golden.source.empty()) {
    const std::vector<CaseSpec> seed8 = named_case_list("seed8");
    for (std::size_t i = 0; i < seed8.size(); ++i)
      plan.tasks.push_back({Level::golden, 0, i, seed8[i], {}});
    plan.golden_tasks = seed8.size();
  }
  return plan;
}

// The key a task's case has in manifest.json and results.jsonl, and that --case takes.
std::string task_key(const Plan& plan, const Task& t) {
  switch (t.level) {
    case Level::family:
      return plan.families[t.group].family->name + "/" + t.spec.name();
    case Level::model:
      return "model/" + t.model.label;
    case Level::golden:
      return "golden/" + t.spec.name();
  }
  throw std::logic_error("task_key: a task has no level");
}

std::vector<std::string> model_labels() {
  std::vector<std::string> labels;
  for (const ModelRoute& r : model_routes()) labels.push_back(r.label);
  return labels;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

// --case: the named cases only, grouped as a whole run groups them (each
// family's cases together, families in the order first named; then the
// model's ways; then golden), so the collector sees the groups it knows.
Plan make_case_plan(const VerifyOptions& o, const Golden& golden) {
  std::vector<std::pair<const Family*, std::vector<CaseSpec>>> families;
  std::vector<ModelRoute> model;
  std::vector<CaseSpec> golden_cases;
  const std::vector<ModelRoute> routes = model_routes();
  for (const std::string& key : o.cases) {
    check_case_key(key);
    if (key.rfind("model/", 0) == 0) {
      model.push_back(*std::find_if(routes.begin(), routes.end(), [&](const ModelRoute& r) {
        return "model/" + r.label == key;
      }));
      continue;
    }
    const CaseSpec spec = parse_case_key(key);
    if (key.rfind("golden/", 0) == 0) {
      golden_cases.push_back(spec);
      continue;
    }
    const Family* f = find_family(spec.family);
    auto group =
        std::find_if(families.begin(), families.end(), [&](const auto& g) { return g.first == f; });
    if (group == families.end()) group = families.insert(families.end(), {f, {}});
    group->second.push_back(spec);
  }
  Plan plan;
  for (const auto& [family, cases] : families) {
    const std::size_t group = plan.families.size();
    plan.families.push_back({family, 0, cases.size()});
    for (std::size_t i = 0; i < cases.size(); ++i)
      plan.tasks.push_back({Level::family, group, i, cases[i], {}});
  }
  for (std::size_t r = 0; r < model.size(); ++r)
    plan.tasks.push_back({Level::model, 0, r, {}, model[r]});
  plan.model_tasks = model.size();
  if (!golden.source.empty()) {  // else the collector reports the golden level SKIPPED, saying why
    for (std::size_t i = 0; i < golden_cases.size(); ++i)
      plan.tasks.push_back({Level::golden, 0, i, golden_cases[i], {}});
    plan.golden_tasks = golden_cases.size();
  }
  return plan;
}

// ---------------------------------------------------------------------------
// The worker side: runs one task and says what happened, as JSON.

std::string run_family_case(nvh::Backend& backend, const VerifyOptions& o,
                            const std::string& family, const CaseSpec& spec) {
  nvh::RecordContext context(family, spec.name());
  const auto start = Clock::now();
  if (o.before_case) o.before_case(family, spec.name());
  const CaseVerdict v = verify_case(backend, spec);
  json routes_run = json::array();
  for (Route r : v.routes_run) routes_run.push_back(route_name(r));
  const AddressClasses& a = v.addresses;
  return json{
      {"outcome", outcome_name(v.outcome)},
      {"route", v.route},
      {"detail", v.detail},
      {"y_sha256", v.y_sha256},
      {"seconds", seconds_since(start)},
      {"routes_run", routes_run},
      {"reason", v.reason},
      {"decision",
       {route_name(v.decision.route), v.decision.variant, v.decision.reason, v.decision.detail}},
      {"addresses", {a.A, a.B, a.weight_scale, a.weight_scale_2, a.bias, a.Y, a.scratch}}}
      .dump();
}

// Three repeats of one way through the model; their token hashes must agree
// (this process compares them across routes).
std::string run_model_route(nvh::Backend& backend, const ModelRoute& route) {
  nvh::RecordContext context("model", route.label);
  const auto start = Clock::now();
  const ModelSpec spec;
  std::string first, detail;
  for (int repeat = 0; repeat < 3 && detail.empty(); ++repeat) {
    const ModelRun run = run_model(backend, spec, route);
    if (first.empty()) first = run.token_sha256;
    if (run.token_sha256 != first) {
      detail = "token hash " + run.token_sha256 + " on repeat " + std::to_string(repeat) +
               ", expected " + first;
    }
  }
  return json{{"token_sha256", first}, {"detail", detail}, {"seconds", seconds_since(start)}}
      .dump();
}

std::string run_golden_case(nvh::Backend& backend, const CaseSpec& spec) {
  nvh::RecordContext context("golden", spec.name());
  const auto start = Clock::now();
  const CaseRun run = run_case(backend, spec, make_inputs(spec));
  return json{{"y_sha256", run.y_sha256},
              {"route", route_name(run.decision.route)},
              {"seconds", seconds_since(start)}}
      .dump();
}

// The kernel probes this worker counted, as [[file, line, taken, not_taken], ...].
std::string probe_counts_json(const nvh::Backend& backend) {
  const auto which = backend.kind() == nvh::BackendKind::host ? nvh::probe::Counters::host
                                                              : nvh::probe::Counters::device;
  json sites = json::array();
  for (const nvh::probe::SiteCount& c : nvh::probe::read_counts(which)) {
    sites.push_back({c.file, c.line, c.taken, c.not_taken});
  }
  return sites.dump();
}

class VerifyWorker : public nvh::TaskWorker {
 public:
  // `mine`: the plan's tasks this run runs, task j of the worker being plan task mine[j].
  VerifyWorker(std::shared_ptr<nvh::Backend> backend, const Plan& plan, const VerifyOptions& o,
               const std::vector<std::size_t>& mine)
      : backend_(std::move(backend)), plan_(plan), o_(o), mine_(mine) {
    if (!o_.device_coverage.empty()) nvh::probe::reset_counts();  // this worker's counts only
  }

  std::string run(std::size_t j) override {
    const std::size_t index = mine_.at(j);
    const Task& t = plan_.tasks.at(index);
    switch (t.level) {
      case Level::family:
        return run_family_case(*backend_, o_, plan_.families[t.group].family->name, t.spec);
      case Level::model:
        return run_model_route(*backend_, t.model);
      case Level::golden:
        return run_golden_case(*backend_, t.spec);
    }
    throw std::logic_error("VerifyWorker::run: task " + std::to_string(index) + " has no level");
  }

  std::string finish() override {
    return o_.device_coverage.empty() ? "" : probe_counts_json(*backend_);
  }

 private:
  std::shared_ptr<nvh::Backend> backend_;
  const Plan& plan_;
  const VerifyOptions& o_;
  const std::vector<std::size_t>& mine_;
};

// ---------------------------------------------------------------------------
// This process's side: each task's result as it arrives, in plan order.

// One task's result as this process receives it: the worker's JSON, or how
// the task failed (it threw, or its worker crashed).
struct Arrived {
  bool ok;              // the task returned
  json result;          // what it returned
  std::string failure;  // otherwise: "threw: ...", "crashed: SIGFPE (...)"
  bool present = true;  // false: another shard runs the task (nothing arrived)
};

// The parts of a worker's verdict that class targets and aims are judged on.
CaseVerdict verdict_from(Outcome o, const json& r) {
  CaseVerdict v;
  v.outcome = o;
  v.route = r.at("route").get<std::string>();
  v.detail = r.at("detail").get<std::string>();
  v.y_sha256 = r.at("y_sha256").get<std::string>();
  for (const json& name : r.at("routes_run"))
    v.routes_run.push_back(*parse_route(name.get<std::string>()));
  const json& d = r.at("decision");
  v.decision.route = *parse_route(d.at(0).get<std::string>());
  v.decision.variant = d.at(1).get<std::string>();
  v.decision.reason = d.at(2).get<std::string>();
  v.decision.detail = d.at(3).get<std::string>();
  v.reason = r.at("reason").get<std::string>();
  const json& a = r.at("addresses");
  v.addresses = {a.at(0), a.at(1), a.at(2), a.at(3), a.at(4), a.at(5), a.at(6)};
  return v;
}

class Collector {
 public:
  Collector(const Plan& plan, const VerifyOptions& o, const Golden& golden, const AimContext& aims,
            int random_cases, std::ostream& out, Tally& tally, std::vector<nvh::JUnitSuite>& suites,
            nvh::Manifest& manifest)
      : plan_(plan),
        o_(o),
        golden_(golden),
        aims_(aims),
        random_cases_(random_cases),
        out_(out),
        tally_(tally),
        suites_(suites),
        manifest_(manifest) {}

  void start() {
    out_ << "level 2, operator:\n";
    if (!plan_.tasks.empty()) begin_group(0);
  }

  void on_task(std::size_t index, const nvh::TaskOutcome& o) {
    handle(index, Arrived{o.returned, o.returned ? json::parse(o.result) : json(), o.failure});
  }

  // A task another shard runs: nothing is recorded for it, but its group still
  // begins and ends here, so the groups of a shard read as those of a whole run.
  void on_absent(std::size_t index) { handle(index, Arrived{false, json(), "", false}); }

  // Off in a shard and for --case: a family's route targets, class targets and
  // aims, the model's cross-route hash and stale golden cases are judged over
  // every case, which only a whole run (or a merge) has.
  void set_judging(bool judging, std::string why_not) {
    judging_ = judging;
    not_judging_why_ = std::move(why_not);
  }
  // --case: each case prints its line (outcome and digest), no family line.
  void set_case_lines(bool on) { case_lines_ = on; }

  void handle(std::size_t index, const Arrived& a) {
    const Task& t = plan_.tasks[index];
    switch (t.level) {
      case Level::family:
        family_case(t, a);
        break;
      case Level::model:
        model_route(t, a);
        break;
      case Level::golden:
        golden_case(t, a);
        break;
    }
    if (index + 1 < plan_.tasks.size()) {
      const Task& next = plan_.tasks[index + 1];
      if (next.level != t.level || next.group != t.group) {
        begin_group(index + 1);
      } else {
        progress_->update(next.index, label(next));
      }
    }
  }

  void on_finish(const std::string& counts) {
    if (counts.empty()) return;
    for (const json& c : json::parse(counts)) {
      auto& [taken, not_taken] = probes_[{c.at(0).get<uint32_t>(), c.at(1).get<uint32_t>()}];
      taken += c.at(2).get<uint64_t>();
      not_taken += c.at(3).get<uint64_t>();
    }
  }

  // Whose run a repro names (a failing case's README.txt gives its --backend).
  // Only a run sets it and so writes repros, not a merge (its shards wrote theirs).
  void set_backend(const BackendInfo& info) {
    backend_ = info.name;
    arch_ = info.arch;
  }
  const std::vector<std::string>& repros() const { return repros_; }

  // A golden level that cannot run here still says so.
  void finish() {
    if (o_.golden && !golden_.skipped_why.empty()) {
      tally_.add(Outcome::skipped, "golden/seed8", golden_.skipped_why);
      suites_.push_back(
          {"golden", {junit_case("seed8", "golden", Outcome::skipped, golden_.skipped_why, 0)}});
      out_ << "level 4, golden: SKIPPED: " << golden_.skipped_why << "\n";
    }
  }

  std::vector<nvh::probe::SiteCount> probe_counts() const {
    std::vector<nvh::probe::SiteCount> sites;
    for (const auto& [site, counts] : probes_)
      sites.push_back({site.first, site.second, counts.first, counts.second});
    return sites;
  }

 private:
  static std::string label(const Task& t) {
    return t.level == Level::model ? t.model.label : t.spec.name();
  }

  void begin_group(std::size_t first_task) {
    const Task& t = plan_.tasks[first_task];
    std::string what = t.level == Level::model    ? "model"
                       : t.level == Level::golden ? "golden seed8"
                                                  : "";
    std::size_t total = t.level == Level::model ? plan_.model_tasks : plan_.golden_tasks;
    if (t.level == Level::family) {
      what = plan_.families[t.group].family->name;
      total = plan_.families[t.group].cases;
    }
    suites_.push_back({t.level == Level::family  ? what
                       : t.level == Level::model ? "model"
                                                 : "golden",
                       {}});
    counts_.clear();
    random_routes_.clear();
    class_runs_.clear();
    example_results_.clear();
    progress_.emplace(what, total);
    progress_->update(0, label(t));
  }

  // A case that failed is also listed in the manifest's metadata, so a case
  // that crashed (and has no digest) is not simply absent from it.
  void record(Outcome o, const std::string& group, const std::string& name,
              const std::string& detail, double seconds) {
    ++counts_[o];
    tally_.add(o, group + "/" + name, detail);
    suites_.back().cases.push_back(junit_case(name, group, o, detail, seconds));
    if (o == Outcome::fail) manifest_.metadata["fail/" + group + "/" + name] = detail;
  }

  void family_case(const Task& t, const Arrived& a) {
    const FamilyRun& f = plan_.families[t.group];
    const std::string& family = f.family->name;
    if (a.present) family_case_arrived(t, a, f, family);
    if (t.index + 1 == f.cases) end_family(f);
  }

  void family_case_arrived(const Task& t, const Arrived& a, const FamilyRun& f,
                           const std::string& family) {
    Outcome o = Outcome::fail;
    std::string detail = a.failure;
    if (a.ok) {
      o = parse_outcome(a.result.at("outcome"));
      detail = a.result.at("detail");
      const std::string digest = a.result.at("y_sha256");
      if (!digest.empty()) manifest_.cases[family + "/" + t.spec.name()] = digest;
      if (t.index >= f.examples && o == Outcome::ok)
        random_routes_.push_back(*parse_route(a.result.at("route").get<std::string>()));
      const CaseVerdict v = verdict_from(o, a.result);
      if (o == Outcome::ok) class_runs_.push_back({t.spec.value_class, v.routes_run});
      if (t.index < f.examples) example_results_.push_back({t.spec, v});
    }
    record(o, family, t.spec.name(), detail, a.ok ? a.result.at("seconds").get<double>() : 0);
    if (o == Outcome::fail) {
      write_repro_of(t.spec, a.ok ? a.result.at("route").get<std::string>() : "",
                     a.ok ? a.result.at("y_sha256").get<std::string>() : "", detail, std::nullopt);
    }
    if (case_lines_)
      case_line(family + "/" + t.spec.name(), o, detail, "Y sha256",
                a.ok ? a.result.at("y_sha256").get<std::string>() : std::string());
  }

  // What --case prints for each case; a whole run has the same outcome in
  // junit.xml and the same digest in manifest.json under the same key.
  void case_line(const std::string& key, Outcome o, const std::string& detail,
                 const std::string& what, const std::string& digest) {
    out_ << "case " << key << ": " << outcome_name(o) << (detail.empty() ? "" : ": " + detail)
         << ", " << what << " " << (digest.empty() ? "(none)" : digest) << "\n";
  }

  void end_family(const FamilyRun& f) {
    progress_->finish("done");
    progress_.reset();
    if (!judging_) {
      if (!case_lines_) {
        out_ << "  " << f.family->name << ": "
             << counts_[Outcome::ok] + counts_[Outcome::fail] + counts_[Outcome::not_supported] +
                    counts_[Outcome::skipped]
             << " of its " << f.cases << " cases here: OK " << counts_[Outcome::ok] << ", FAIL "
             << counts_[Outcome::fail] << ", NOT_SUPPORTED " << counts_[Outcome::not_supported]
             << ", SKIPPED " << counts_[Outcome::skipped]
             << "; route targets and aims not judged: " << not_judging_why_ << "\n";
      }
      return;
    }
    // A family's route targets are shares of its random cases: with none (--cases 0) there is
    // nothing to judge. Class targets (the value_class family) count examples too, so they are
    // judged with no random cases.
    const std::string short_of_target =
        (random_cases_ > 0 ? check_targets(*f.family, random_routes_) : "") +
        check_class_targets(*f.family, class_runs_);
    if (!short_of_target.empty())
      record(Outcome::fail, f.family->name, "route-targets", short_of_target, 0);
    const std::string missed_aims = check_aims(*f.family, example_results_, aims_);
    if (!missed_aims.empty()) record(Outcome::fail, f.family->name, "aims", missed_aims, 0);
    for (const std::string& why : aims_unreachable_here(*f.family, aims_)) {
      out_ << "  " << f.family->name << ": aim not reachable here: " << why << "\n";
    }
    out_ << "  " << f.family->name << ": " << f.cases << " cases (" << f.examples << " boundary, "
         << f.cases - f.examples << " random): OK " << counts_[Outcome::ok] << ", FAIL "
         << counts_[Outcome::fail] << ", NOT_SUPPORTED " << counts_[Outcome::not_supported]
         << ", SKIPPED " << counts_[Outcome::skipped]
         << (random_cases_ == 0        ? "; route targets not judged (no random cases)"
             : short_of_target.empty() ? ""
                                       : "; targets missed: " + short_of_target)
         << "\n";
  }

  // Every route's tokens must hash like the first route's.
  void model_route(const Task& t, const Arrived& a) {
    const ModelRoute& route = t.model;
    if (a.present) {
      std::string detail = a.ok ? a.result.at("detail").get<std::string>() : a.failure;
      if (a.ok && detail.empty()) {
        const std::string hash = a.result.at("token_sha256");
        if (model_first_.empty()) model_first_ = hash;
        if (hash != model_first_)
          detail = "token hash " + hash + ", expected " + model_first_ + " (the first route's)";
      }
      const Outcome o = detail.empty() ? Outcome::ok : Outcome::fail;
      record(o, "model", route.label, detail, a.ok ? a.result.at("seconds").get<double>() : 0);
      if (case_lines_)
        case_line("model/" + route.label, o, detail, "token sha256",
                  a.ok ? a.result.at("token_sha256").get<std::string>() : std::string());
    }
    if (t.index + 1 == plan_.model_tasks) {
      progress_->finish("done");
      progress_.reset();
      const ModelSpec spec;
      out_ << "level 3, model: " << spec.layers + 1 << " operator calls per prompt of "
           << spec.tokens << " tokens, " << plan_.model_tasks << " routes x 3 repeats, token hash "
           << model_first_ << "\n";
    }
  }

  // Each seed8 digest against the golden manifest's.
  void golden_case(const Task& t, const Arrived& a) {
    if (!golden_manifest_)
      golden_manifest_ = nvh::parse_manifest(golden_.text, golden_.source + " (built in)");
    const std::string name = t.spec.name();
    if (a.present) golden_case_arrived(t.spec, a);
    if (t.index + 1 == plan_.golden_tasks) end_golden();
  }

  void golden_case_arrived(const CaseSpec& golden_spec, const Arrived& a) {
    const std::string name = golden_spec.name();
    ++golden_ran_;
    const auto golden = golden_manifest_->cases.find(name);
    const bool listed = golden != golden_manifest_->cases.end();
    const std::string got = a.ok ? a.result.at("y_sha256").get<std::string>() : std::string();
    std::string detail = a.failure;
    if (a.ok) {
      manifest_.cases["golden/" + name] = got;
      if (!listed) {
        detail = "not in " + golden_.source;
      } else if (golden->second != got) {
        detail = "digest " + got + ", " + golden_.source + " has " + golden->second;
      } else {
        ++golden_equal_;
      }
    }
    const Outcome o = detail.empty() ? Outcome::ok : Outcome::fail;
    record(o, "golden", name, detail, a.ok ? a.result.at("seconds").get<double>() : 0);
    if (o == Outcome::fail) {
      CaseSpec spec = golden_spec;
      spec.family = "golden";  // the level it failed in (the family is no part of the inputs)
      write_repro_of(
          spec, a.ok ? a.result.at("route").get<std::string>() : "", got, detail,
          listed ? std::optional<ExpectedDigest>({golden->second, golden_.source + " (built in)"})
                 : std::nullopt);
    }
    if (case_lines_) case_line("golden/" + name, o, detail, "Y sha256", got);
  }

  void end_golden() {
    progress_->finish("done");
    progress_.reset();
    // A golden case the list no longer has would otherwise go unnoticed
    // (judged where every golden case ran: not in a shard or for --case).
    std::size_t stale = 0;
    for (const auto& [golden_name, digest] : golden_manifest_->cases) {
      if (!judging_) break;
      const bool listed = std::any_of(plan_.tasks.begin(), plan_.tasks.end(), [&](const Task& g) {
        return g.level == Level::golden && g.spec.name() == golden_name;
      });
      if (!listed) {
        record(Outcome::fail, "golden", golden_name,
               "in " + golden_.source + " but not in the seed8 list", 0);
        ++stale;
      }
    }
    out_ << "level 4, golden: " << golden_equal_ << " of " << golden_ran_
         << " seed8 digests equal to " << golden_.source << " (built in)"
         << (stale ? ", " + std::to_string(stale) + " golden cases not in the list" : "") << "\n";
  }

  // A failing case's repro folder (properties/repro.h); the expected digest is
  // the reference's unless given. A repro that cannot be written is said, and
  // the run goes on: the verdicts matter more.
  void write_repro_of(const CaseSpec& spec, const std::string& route, const std::string& got,
                      const std::string& detail, const std::optional<ExpectedDigest>& expected) {
    if (backend_.empty()) return;  // a merge
    try {
      const ExpectedDigest e = expected ? *expected : reference_digest(spec, make_inputs(spec));
      repros_.push_back(write_repro(
          o_.out_dir, spec, {route, backend_, arch_, o_.seed, e.sha256, e.from, got, detail}));
    } catch (const std::exception& e) {
      out_ << "  could not write the repro of " << spec.name() << ": " << e.what() << "\n";
    }
  }

  const Plan& plan_;
  const VerifyOptions& o_;
  const Golden& golden_;
  const AimContext& aims_;
  int random_cases_;
  std::ostream& out_;
  Tally& tally_;
  std::vector<nvh::JUnitSuite>& suites_;
  nvh::Manifest& manifest_;

  std::optional<nvh::Progress> progress_;
  std::map<Outcome, int> counts_;     // of the current group
  std::vector<Route> random_routes_;  // of the current family
  std::vector<ClassRun> class_runs_;  // every passing case's value class and routes, current family
  std::vector<ExampleResult> example_results_;  // the current family's examples, for its aims
  std::string model_first_;
  std::optional<nvh::Manifest> golden_manifest_;
  std::size_t golden_equal_ = 0, golden_ran_ = 0;
  std::string backend_, arch_;
  std::vector<std::string> repros_;
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint64_t, uint64_t>> probes_;
  bool judging_ = true, case_lines_ = false;
  std::string not_judging_why_;
};

// ---------------------------------------------------------------------------

std::vector<nvh::BranchSite> branch_sites(const std::vector<nvh::probe::SiteCount>& counts,
                                          const std::string& root) {
  std::vector<nvh::BranchSite> sites;
  for (const nvh::probe::SiteCount& c : counts) {
    const std::string file = c.file < kProbeFileCount
                                 ? kProbeFiles[c.file]
                                 : "unknown_probe_file_" + std::to_string(c.file);
    sites.push_back({root + "/" + file, c.line, c.taken, c.not_taken});
  }
  return sites;
}

std::string write_outputs(const std::string& dir, const std::vector<nvh::JUnitSuite>& suites,
                          const nvh::Manifest& manifest) {
  nvh::write_junit_xml(suites, dir + "/junit.xml");
  nvh::write_manifest(manifest, dir + "/manifest.json");
  return dir + "/junit.xml, " + dir + "/manifest.json, " + dir + "/routes.jsonl";
}

// The launches the workers appended to the run's route log (none: no file).
std::vector<nvh::LaunchRecord> logged_launches(const std::string& route_log) {
  return std::filesystem::exists(route_log) ? nvh::read_route_log(route_log)
                                            : std::vector<nvh::LaunchRecord>{};
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
// the end of a run and of a merge. `collector` is null in a merge that has no
// probe counts (it combines no device coverage).
int report_run(const VerifyOptions& o, const BackendInfo& info, const std::string& route_log,
               const std::string& not_judged, const Collector& collector, Tally& tally,
               const std::vector<nvh::JUnitSuite>& suites, const nvh::Manifest& manifest,
               Clock::time_point start, std::ostream& out) {
  // The gate judges the launches of this run only. A run of some families
  // cannot be expected to reach every route: its gate is shown, not judged.
  const nvh::GateReport gate =
      nvh::evaluate_gate(gate_declaration(), info.gates, logged_launches(route_log));
  nvh::RouteRecorder::global().set_log_path("");
  out << "\nroute coverage:\n" << nvh::render_gate_text(gate, not_judged);
  if (not_judged.empty() && !gate.passed())
    tally.add(Outcome::fail, "route-coverage-gate", "see the route table");
  std::ofstream(o.out_dir + "/route_gate.txt") << nvh::render_gate_text(gate, not_judged);
  std::ofstream(o.out_dir + "/route_gate.json") << nvh::render_gate_json(gate, not_judged);
  if (!o.device_coverage.empty()) {  // kernel branch coverage next to the route table
    const std::string root =
        o.source_root.empty() ? std::filesystem::path(__FILE__).parent_path().parent_path().string()
                              : o.source_root;
    const std::vector<nvh::BranchSite> sites = branch_sites(collector.probe_counts(), root);
    make_folder("device_coverage's folder",
                std::filesystem::path(o.device_coverage).parent_path().string());
    nvh::write_lcov_tracefile(o.device_coverage, "probes_" + info.arch, sites);
    out << "\nkernel branch coverage (probes, " << info.arch
        << "): " << nvh::render_trace_summary(sites, 20, root + "/") << "wrote "
        << o.device_coverage << "\n";
  }

  if (!collector.repros().empty()) {
    out << "wrote " << collector.repros().size() << " repro folder(s) of failing cases under "
        << o.out_dir << "/repro (each README.txt says how to rerun its case)\n";
  }
  out << "\nwrote " << write_outputs(o.out_dir, suites, manifest) << "\n";
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

// A run of some families cannot be expected to reach every route: "" when
// the run has them all.
std::string family_filter_why(const VerifyOptions& o, const Plan& plan) {
  return o.families.empty() ? ""
                            : "--family selects " + std::to_string(plan.families.size()) + " of " +
                                  std::to_string(all_families().size()) + " families";
}

// ---------------------------------------------------------------------------
// What a run leaves for `merge`: shard.json and results.jsonl.

constexpr const char* kShardFormat = "nvfp4.verify.shard.v1";

// The fields every shard of one run must share, and merge checks.
const char* const kSharedFields[] = {"seed",  "random_cases", "families", "primitives",
                                     "model", "golden",       "backend",  "tasks"};

json shard_meta(const VerifyOptions& o, int random_cases, const std::string& description,
                std::size_t tasks, const json& primitive_results) {
  return json{{"format", kShardFormat}, {"shard", {o.shard.index, o.shard.count}},
              {"seed", o.seed},         {"random_cases", random_cases},
              {"families", o.families}, {"primitives", o.primitives},
              {"model", o.model},       {"golden", o.golden},
              {"cases", o.cases},       {"backend", json::parse(description)},
              {"tasks", tasks},         {"primitive_results", primitive_results}};
}

std::string result_line(std::size_t task, const std::string& key, const nvh::TaskOutcome& r) {
  return json{{"task", task},
              {"key", key},
              {"returned", r.returned},
              {"result", r.result},
              {"failure", r.failure}}
      .dump();
}

// Level 1 as a shard saved it (verify_primitives' `saved`).
nvh::JUnitSuite replay_primitives(const json& saved, std::ostream& out, Tally& tally) {
  nvh::JUnitSuite suite{"primitives", {}};
  for (const json& c : saved.at("checks")) {
    const std::string name = c.at(0), detail = c.at(2);
    const Outcome o = parse_outcome(c.at(1));
    tally.add(o, "primitives/" + name, detail);
    suite.cases.push_back(junit_case(name, "primitives", o, detail, 0));
  }
  out << saved.at("line").get<std::string>();
  return suite;
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

}  // namespace

void check_case_key(const std::string& key) {
  if (key.rfind("model/", 0) == 0) {
    const std::vector<std::string> labels = model_labels();
    const std::string label = key.substr(6);
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) {
      throw std::invalid_argument("check_case_key: key = " + key +
                                  ": the model has no way labelled \"" + label +
                                  "\" (its ways: " + joined(labels) + ")");
    }
    return;
  }
  parse_case_key(key);
}

CaseSpec parse_case_key(const std::string& key) {
  const std::size_t slash = key.find('/');
  if (slash == std::string::npos) {
    throw std::invalid_argument(
        "parse_case_key: key = " + key +
        ": no '/': name the case as manifest.json keys it, FAMILY/CASE (e.g. "
        "decode/fp16_M1_N17_K32_bs16_bias_s1)");
  }
  const std::string family = key.substr(0, slash), name = key.substr(slash + 1);
  if (family != "golden" && !find_family(family)) {
    std::vector<std::string> names;
    for (const Family& f : all_families()) names.push_back(f.name);
    throw std::invalid_argument("parse_case_key: key = " + key + ": unknown family \"" + family +
                                "\" (the families: " + joined(names) + "; and golden)");
  }
  CaseSpec spec;
  try {
    spec = parse_case_name(name);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("parse_case_key: key = " + key + ": " + e.what());
  }
  if (family == "golden") {
    for (const CaseSpec& s : named_case_list("seed8")) {
      if (s.name() == name) return s;  // as the list has it (family "seed8")
    }
    throw std::invalid_argument("parse_case_key: key = " + key + ": " + name +
                                " is not a case of the seed8 list");
  }
  spec.family = family;
  return spec;
}

std::vector<PlannedCase> planned_cases(const VerifyOptions& o, bool host) {
  BackendInfo info;
  info.host = host;
  info.arch = host ? "host" : "sm_90";  // a GPU run plans the golden level as the H200 would
  const int random_cases = o.random_cases >= 0 ? o.random_cases : host ? 25 : 200;
  const Plan plan = make_plan(o, random_cases, golden_for(info));
  std::vector<PlannedCase> cases;
  for (const Task& t : plan.tasks) {
    if (t.level != Level::model) cases.push_back({task_key(plan, t), t.spec});
  }
  return cases;
}

int run_verify(const BackendFactory& make_backend, const VerifyOptions& options,
               std::ostream& out) {
  const auto start = Clock::now();
  if (options.out_dir.empty())
    throw std::invalid_argument("run_verify: out_dir = \"\": must name a folder");
  // --case runs what it names: level 1 never, the model and golden levels when a case of theirs is
  // named.
  const bool case_mode = !options.cases.empty();
  VerifyOptions o = options;
  if (case_mode) {
    const auto names = [&](const char* prefix) {
      return std::any_of(o.cases.begin(), o.cases.end(),
                         [&](const std::string& k) { return k.rfind(prefix, 0) == 0; });
    };
    o.primitives = false;
    o.model = names("model/");
    o.golden = names("golden/");
  }
  for (const std::string& key : o.cases) check_case_key(key);  // before any backend is made
  make_folder("out_dir", o.out_dir);
  // Workers append their launches here (each record one O_APPEND write, so
  // they interleave whole lines); the gate reads the file back.
  const std::string route_log = o.out_dir + "/routes.jsonl";
  std::filesystem::remove(route_log);
  std::filesystem::remove_all(o.out_dir +
                              "/repro");  // a previous run's failures are not this run's
  nvh::RouteRecorder::global().clear();
  nvh::RouteRecorder::global().set_log_path(route_log);

  // In process, the one backend serves the description and every task.
  const nvh::Isolation isolation = o.isolate ? nvh::Isolation::forked : nvh::Isolation::in_process;
  std::shared_ptr<nvh::Backend> shared =
      o.isolate ? nullptr : std::shared_ptr<nvh::Backend>(make_backend());
  auto backend_here = [&]() -> std::shared_ptr<nvh::Backend> {
    return shared ? shared : make_backend();
  };
  std::string description;
  nvh::run_tasks(
      1, [&] { return std::make_unique<DescribeWorker>(backend_here); }, isolation,
      [&](std::size_t, const nvh::TaskOutcome& d) {
        const std::string threw = "threw: ";  // the backend's own message, as in process
        if (d.failure.rfind(threw, 0) == 0)
          throw nvh::BackendUnavailable(d.failure.substr(threw.size()));
        if (!d.returned)
          throw std::runtime_error("verify: the worker making the backend " + d.failure);
        description = d.result;
      });
  const BackendInfo info = parse_info(description);

  const int random_cases = o.random_cases >= 0 ? o.random_cases : info.host ? 25 : 200;
  out << "nvfp4-harness verify on " << info.name << " (" << info.arch << ", " << info.device_name
      << "), seed " << o.seed << (o.isolate ? "" : ", in process (--no-fork)")
      << (o.shard.sharded()
              ? ", shard " + o.shard.text() + " (tasks i with i % " +
                    std::to_string(o.shard.count) + " == " + std::to_string(o.shard.index) + ")"
              : "")
      << (case_mode ? ", " + std::to_string(o.cases.size()) + " named cases (--case)" : "") << "\n";

  Tally tally;
  std::vector<nvh::JUnitSuite> suites;
  nvh::Manifest manifest;
  manifest.backend = info.name;
  manifest.arch = info.arch;
  manifest.tool = "nvfp4-harness verify";
  json primitive_results;  // null unless this run ran level 1
  if (o.primitives && o.shard.index == 0)
    suites.push_back(verify_primitives(out, tally, &primitive_results));
  else if (!case_mode && !o.primitives)
    out << "level 1, primitives: skipped (--skip primitives)\n";
  if (!case_mode && !o.model) out << "level 3, model: skipped (--skip model)\n";
  if (!case_mode && !o.golden) out << "level 4, golden: skipped (--skip golden)\n";

  const Golden golden = golden_for(info);
  const Plan plan = case_mode ? make_case_plan(o, golden) : make_plan(o, random_cases, golden);
  std::vector<std::size_t> mine;  // the plan's tasks this shard runs
  for (std::size_t i = 0; i < plan.tasks.size(); ++i) {
    if (o.shard.owns(i)) mine.push_back(i);
  }
  const std::string shard_note = "shard " + o.shard.text() + ": gate judged after merge";
  Collector collector(plan, o, golden, info.aims, random_cases, out, tally, suites, manifest);
  if (o.shard.sharded()) collector.set_judging(false, shard_note);
  if (case_mode) {
    collector.set_judging(false, "--case");
    collector.set_case_lines(true);
  }
  collector.set_backend(info);
  collector.start();
  std::ofstream results(o.out_dir + "/results.jsonl");
  std::size_t seen = 0;  // the plan's tasks the collector has been shown
  nvh::run_tasks(
      mine.size(), [&] { return std::make_unique<VerifyWorker>(backend_here(), plan, o, mine); },
      isolation,
      [&](std::size_t j, const nvh::TaskOutcome& r) {
        for (; seen < mine[j]; ++seen) collector.on_absent(seen);
        results << result_line(mine[j], task_key(plan, plan.tasks[mine[j]]), r) << "\n"
                << std::flush;
        collector.on_task(seen++, r);
      },
      [&](const std::string& counts) { collector.on_finish(counts); });
  for (; seen < plan.tasks.size(); ++seen) collector.on_absent(seen);
  collector.finish();
  std::ofstream(o.out_dir + "/shard.json")
      << shard_meta(o, random_cases, description, plan.tasks.size(), primitive_results).dump(2)
      << "\n";

  const std::string not_judged = case_mode
                                     ? "--case names " + std::to_string(o.cases.size()) + " cases"
                                 : o.shard.sharded() ? shard_note
                                                     : family_filter_why(o, plan);
  return report_run(o, info, route_log, not_judged, collector, tally, suites, manifest, start, out);
}

int run_merge(const MergeOptions& m, std::ostream& out) {
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
      throw std::invalid_argument("run_merge: " + s.dir + ": shard " + nvh::Shard{index, n}.text() +
                                  ", but " + given[0].dir + " is one of " + std::to_string(count) +
                                  " shards");
    }
    const ShardRun*& slot = by_index[static_cast<std::size_t>(index)];
    if (slot) {
      throw std::invalid_argument("run_merge: " + s.dir + ": shard " + nvh::Shard{index, n}.text() +
                                  " given twice (" + slot->dir + " is it too)");
    }
    slot = &s;
  }
  for (int i = 0; i < count; ++i) {
    if (!by_index[static_cast<std::size_t>(i)]) {
      throw std::invalid_argument("run_merge: shard " + nvh::Shard{i, count}.text() +
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
  o.primitives = meta.at("primitives");
  o.model = meta.at("model");
  o.golden = meta.at("golden");
  const int random_cases = meta.at("random_cases");
  o.random_cases = random_cases;
  const std::string description = meta.at("backend").dump();
  const BackendInfo info = parse_info(description);
  const Golden golden = golden_for(info);
  const Plan plan = make_plan(o, random_cases, golden);
  if (plan.tasks.size() != meta.at("tasks").get<std::size_t>()) {
    throw std::invalid_argument("run_merge: the shards ran " + meta.at("tasks").dump() +
                                " tasks, this binary plans " + std::to_string(plan.tasks.size()) +
                                " for their options: merge with the binary that ran them");
  }

  // Each task's outcome from the shard that ran it: no task twice, none missing.
  std::vector<std::optional<nvh::TaskOutcome>> outcomes(plan.tasks.size());
  std::vector<std::set<std::string>> keys_of(
      static_cast<std::size_t>(count));  // each shard's case keys
  for (int i = 0; i < count; ++i) {
    const ShardRun& s = *by_index[static_cast<std::size_t>(i)];
    const nvh::Shard shard{i, count};
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
      const std::string planned = task_key(plan, plan.tasks[task]);
      if (key != planned) {
        throw std::invalid_argument(where + "task " + std::to_string(task) + " is " + key +
                                    ", this binary plans " + planned +
                                    ": merge with the binary that ran the shards");
      }
      if (outcomes[task])
        throw std::invalid_argument(where + "case " + key + " (task " + std::to_string(task) +
                                    ") twice");
      outcomes[task] =
          nvh::TaskOutcome{r.at("returned").get<bool>(), r.at("result").get<std::string>(),
                           r.at("failure").get<std::string>()};
      keys_of[static_cast<std::size_t>(i)].insert(key);
    }
  }
  for (std::size_t t = 0; t < plan.tasks.size(); ++t) {
    if (!outcomes[t]) {
      const ShardRun& s = *by_index[t % static_cast<std::size_t>(count)];
      throw std::invalid_argument("run_merge: " + s.dir + " has no result for " +
                                  task_key(plan, plan.tasks[t]) + " (task " + std::to_string(t) +
                                  "): did that shard finish?");
    }
  }

  // The shards' manifests, united: each names only its own cases, and a case
  // (a repeated draw) in two of them has one digest.
  std::map<std::string, std::string> united;
  for (int i = 0; i < count; ++i) {
    const ShardRun& s = *by_index[static_cast<std::size_t>(i)];
    const nvh::Manifest part = nvh::read_manifest(s.dir + "/manifest.json");
    for (const auto& [key, digest] : part.cases) {
      if (!keys_of[static_cast<std::size_t>(i)].count(key)) {
        throw std::invalid_argument("run_merge: " + s.dir + "/manifest.json: case " + key +
                                    " is not one of shard " + nvh::Shard{i, count}.text() +
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
  out << "nvfp4-harness merge of " << count << " shard(s) of verify on " << info.name << " ("
      << info.arch << ", " << info.device_name << "), seed " << o.seed << "\n";
  Tally tally;
  std::vector<nvh::JUnitSuite> suites;
  nvh::Manifest manifest;
  manifest.backend = info.name;
  manifest.arch = info.arch;
  manifest.tool = "nvfp4-harness verify";
  const json& primitive_results = by_index[0]->meta.at("primitive_results");
  if (o.primitives) suites.push_back(replay_primitives(primitive_results, out, tally));
  Collector collector(plan, o, golden, info.aims, random_cases, out, tally, suites, manifest);
  collector.start();
  std::ofstream results(o.out_dir + "/results.jsonl");
  for (std::size_t t = 0; t < plan.tasks.size(); ++t) {
    results << result_line(t, task_key(plan, plan.tasks[t]), *outcomes[t]) << "\n";
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
      << shard_meta(o, random_cases, description, plan.tasks.size(), primitive_results).dump(2)
      << "\n";
  return report_run(o, info, route_log, family_filter_why(o, plan), collector, tally, suites,
                    manifest, start, out);
}

}  // namespace nvfp4
