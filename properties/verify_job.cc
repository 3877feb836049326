#include "properties/verify_job.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
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

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Tally {
  std::map<Outcome, int> counts;
  std::vector<std::string> failures;  // "name: detail"
  void add(Outcome o, const std::string& name, const std::string& detail) {
    ++counts[o];
    if (o == Outcome::fail) failures.push_back(name + ": " + detail);
  }
};

nvh::JUnitCase junit_case(const std::string& name, const std::string& group, Outcome o, const std::string& detail,
                          double seconds) {
  nvh::JUnitCase c{name, group, nvh::JUnitCase::Result::passed, "", seconds};
  if (o == Outcome::fail) c.result = nvh::JUnitCase::Result::failed;
  if (o == Outcome::not_supported || o == Outcome::skipped) c.result = nvh::JUnitCase::Result::skipped;
  if (o != Outcome::ok) c.message = std::string(outcome_name(o)) + ": " + detail;
  return c;
}

Outcome parse_outcome(const std::string& name) {
  for (Outcome o : {Outcome::ok, Outcome::fail, Outcome::not_supported, Outcome::skipped}) {
    if (name == outcome_name(o)) return o;
  }
  throw std::runtime_error("verify: a worker reported outcome \"" + name + "\", which is none of the four");
}

// Level 1: the format itself, against the toolkit's own conversions. It needs
// no backend, so it runs in this process.
nvh::JUnitSuite verify_primitives(std::ostream& out, Tally& tally) {
  nvh::JUnitSuite suite{"primitives", {}};
  const auto start = Clock::now();
  const ref::PrimitiveReport report = ref::check_primitives();
  for (const ref::PrimitiveCheck& c : report.checks) {
    const Outcome o = c.mismatches ? Outcome::fail : Outcome::ok;
    std::string detail = std::to_string(c.mismatches) + " mismatches of " + std::to_string(c.compared);
    for (const auto& line : c.first_mismatches) detail += "; " + line;
    tally.add(o, "primitives/" + c.name, detail);
    suite.cases.push_back(junit_case(c.name, "primitives", o, detail, 0));
  }
  out << "level 1, primitives: " << report.checks.size() << " checks against the CUDA toolkit's conversions, "
      << report.total_mismatches() << " mismatches (" << seconds_since(start) << " s)\n";
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
  BackendInfo info{j.at("name").get<std::string>(), j.at("arch").get<std::string>(),
                   j.at("device_name").get<std::string>(), j.at("host").get<bool>(),
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
  explicit DescribeWorker(std::function<std::shared_ptr<nvh::Backend>()> make) : make_(std::move(make)) {}
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
  std::size_t group;   // the family's index in Plan::families; 0 for the model and golden levels
  std::size_t index;   // the case's index in its group
  CaseSpec spec;       // family and golden cases
  ModelRoute model;    // model level
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
  return {"", "", "the golden GPU manifest (properties/golden/seed8.h200.json) is for the H200 (sm_90) only; this device is " +
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
    if (!o.families.empty() && std::find(o.families.begin(), o.families.end(), f.name) == o.families.end()) continue;
    std::vector<CaseSpec> cases = f.examples;
    for (const CaseSpec& s : sample_family(f, random_cases, o.seed)) cases.push_back(s);
    const std::size_t group = plan.families.size();
    plan.families.push_back({&f, f.examples.size(), cases.size()});
    for (std::size_t i = 0; i < cases.size(); ++i) plan.tasks.push_back({Level::family, group, i, cases[i], {}});
  }
  if (o.model) {
    const std::vector<ModelRoute> routes = model_routes();
    for (std::size_t r = 0; r < routes.size(); ++r) plan.tasks.push_back({Level::model, 0, r, {}, routes[r]});
    plan.model_tasks = routes.size();
  }
  if (o.golden && !golden.source.empty()) {
    const std::vector<CaseSpec> seed8 = named_case_list("seed8");
    for (std::size_t i = 0; i < seed8.size(); ++i) plan.tasks.push_back({Level::golden, 0, i, seed8[i], {}});
    plan.golden_tasks = seed8.size();
  }
  return plan;
}

// ---------------------------------------------------------------------------
// The worker side: runs one task and says what happened, as JSON.

std::string run_family_case(nvh::Backend& backend, const VerifyOptions& o, const std::string& family,
                            const CaseSpec& spec) {
  nvh::RecordContext context(family, spec.name());
  const auto start = Clock::now();
  if (o.before_case) o.before_case(family, spec.name());
  const CaseVerdict v = verify_case(backend, spec);
  json routes_run = json::array();
  for (Route r : v.routes_run) routes_run.push_back(route_name(r));
  const AddressClasses& a = v.addresses;
  return json{{"outcome", outcome_name(v.outcome)},
              {"route", v.route},
              {"detail", v.detail},
              {"y_sha256", v.y_sha256},
              {"seconds", seconds_since(start)},
              {"routes_run", routes_run},
              {"reason", v.reason},
              {"decision", {route_name(v.decision.route), v.decision.variant, v.decision.reason, v.decision.detail}},
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
      detail = "token hash " + run.token_sha256 + " on repeat " + std::to_string(repeat) + ", expected " + first;
    }
  }
  return json{{"token_sha256", first}, {"detail", detail}, {"seconds", seconds_since(start)}}.dump();
}

std::string run_golden_case(nvh::Backend& backend, const CaseSpec& spec) {
  nvh::RecordContext context("golden", spec.name());
  const auto start = Clock::now();
  const CaseRun run = run_case(backend, spec, make_inputs(spec));
  return json{{"y_sha256", run.y_sha256}, {"route", route_name(run.decision.route)}, {"seconds", seconds_since(start)}}
      .dump();
}

// The kernel probes this worker counted, as [[file, line, taken, not_taken], ...].
std::string probe_counts_json(const nvh::Backend& backend) {
  const auto which = backend.kind() == nvh::BackendKind::host ? nvh::probe::Counters::host : nvh::probe::Counters::device;
  json sites = json::array();
  for (const nvh::probe::SiteCount& c : nvh::probe::read_counts(which)) {
    sites.push_back({c.file, c.line, c.taken, c.not_taken});
  }
  return sites.dump();
}

class VerifyWorker : public nvh::TaskWorker {
 public:
  VerifyWorker(std::shared_ptr<nvh::Backend> backend, const Plan& plan, const VerifyOptions& o)
      : backend_(std::move(backend)), plan_(plan), o_(o) {
    if (!o_.device_coverage.empty()) nvh::probe::reset_counts();  // this worker's counts only
  }

  std::string run(std::size_t index) override {
    const Task& t = plan_.tasks.at(index);
    switch (t.level) {
      case Level::family: return run_family_case(*backend_, o_, plan_.families[t.group].family->name, t.spec);
      case Level::model: return run_model_route(*backend_, t.model);
      case Level::golden: return run_golden_case(*backend_, t.spec);
    }
    throw std::logic_error("VerifyWorker::run: task " + std::to_string(index) + " has no level");
  }

  std::string finish() override { return o_.device_coverage.empty() ? "" : probe_counts_json(*backend_); }

 private:
  std::shared_ptr<nvh::Backend> backend_;
  const Plan& plan_;
  const VerifyOptions& o_;
};

// ---------------------------------------------------------------------------
// This process's side: each task's result as it arrives, in plan order.

// One task's result as this process receives it: the worker's JSON, or how
// the task failed (it threw, or its worker crashed).
struct Arrived {
  bool ok;             // the task returned
  json result;         // what it returned
  std::string failure; // otherwise: "threw: ...", "crashed: SIGFPE (...)"
};

// The parts of a worker's verdict that class targets and aims are judged on.
CaseVerdict verdict_from(Outcome o, const json& r) {
  CaseVerdict v;
  v.outcome = o;
  v.route = r.at("route").get<std::string>();
  v.detail = r.at("detail").get<std::string>();
  v.y_sha256 = r.at("y_sha256").get<std::string>();
  for (const json& name : r.at("routes_run")) v.routes_run.push_back(*parse_route(name.get<std::string>()));
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
  Collector(const Plan& plan, const VerifyOptions& o, const Golden& golden, const AimContext& aims, int random_cases,
            std::ostream& out,
            Tally& tally, std::vector<nvh::JUnitSuite>& suites, nvh::Manifest& manifest)
      : plan_(plan), o_(o), golden_(golden), aims_(aims), random_cases_(random_cases), out_(out), tally_(tally),
        suites_(suites), manifest_(manifest) {}

  void start() {
    out_ << "level 2, operator:\n";
    if (!plan_.tasks.empty()) begin_group(0);
  }

  void on_task(std::size_t index, const nvh::TaskOutcome& o) {
    Arrived a{o.returned, o.returned ? json::parse(o.result) : json(), o.failure};
    const Task& t = plan_.tasks[index];
    switch (t.level) {
      case Level::family: family_case(t, a); break;
      case Level::model: model_route(t, a); break;
      case Level::golden: golden_case(t, a); break;
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
  void set_backend(const BackendInfo& info) {
    backend_ = info.name;
    arch_ = info.arch;
  }
  const std::vector<std::string>& repros() const { return repros_; }

  // A golden level that cannot run here still says so.
  void finish() {
    if (o_.golden && !golden_.skipped_why.empty()) {
      tally_.add(Outcome::skipped, "golden/seed8", golden_.skipped_why);
      suites_.push_back({"golden", {junit_case("seed8", "golden", Outcome::skipped, golden_.skipped_why, 0)}});
      out_ << "level 4, golden: SKIPPED: " << golden_.skipped_why << "\n";
    }
  }

  std::vector<nvh::probe::SiteCount> probe_counts() const {
    std::vector<nvh::probe::SiteCount> sites;
    for (const auto& [site, counts] : probes_) sites.push_back({site.first, site.second, counts.first, counts.second});
    return sites;
  }

 private:
  static std::string label(const Task& t) {
    return t.level == Level::model ? t.model.label : t.spec.name();
  }

  void begin_group(std::size_t first_task) {
    const Task& t = plan_.tasks[first_task];
    std::string what = t.level == Level::model ? "model" : t.level == Level::golden ? "golden seed8" : "";
    std::size_t total = t.level == Level::model ? plan_.model_tasks : plan_.golden_tasks;
    if (t.level == Level::family) {
      what = plan_.families[t.group].family->name;
      total = plan_.families[t.group].cases;
    }
    suites_.push_back({t.level == Level::family ? what : t.level == Level::model ? "model" : "golden", {}});
    counts_.clear();
    random_routes_.clear();
    class_runs_.clear();
    example_results_.clear();
    progress_.emplace(what, total);
    progress_->update(0, label(t));
  }

  // A case that failed is also listed in the manifest's metadata, so a case
  // that crashed (and has no digest) is not simply absent from it.
  void record(Outcome o, const std::string& group, const std::string& name, const std::string& detail,
              double seconds) {
    ++counts_[o];
    tally_.add(o, group + "/" + name, detail);
    suites_.back().cases.push_back(junit_case(name, group, o, detail, seconds));
    if (o == Outcome::fail) manifest_.metadata["fail/" + group + "/" + name] = detail;
  }

  void family_case(const Task& t, const Arrived& a) {
    const FamilyRun& f = plan_.families[t.group];
    const std::string& family = f.family->name;
    Outcome o = Outcome::fail;
    std::string detail = a.failure;
    if (a.ok) {
      o = parse_outcome(a.result.at("outcome"));
      detail = a.result.at("detail");
      const std::string digest = a.result.at("y_sha256");
      if (!digest.empty()) manifest_.cases[family + "/" + t.spec.name()] = digest;
      if (t.index >= f.examples && o == Outcome::ok) random_routes_.push_back(*parse_route(a.result.at("route").get<std::string>()));
      const CaseVerdict v = verdict_from(o, a.result);
      if (o == Outcome::ok) class_runs_.push_back({t.spec.value_class, v.routes_run});
      if (t.index < f.examples) example_results_.push_back({t.spec, v});
    }
    record(o, family, t.spec.name(), detail, a.ok ? a.result.at("seconds").get<double>() : 0);
    if (o == Outcome::fail) {
      write_repro_of(t.spec, a.ok ? a.result.at("route").get<std::string>() : "",
                     a.ok ? a.result.at("y_sha256").get<std::string>() : "", detail, std::nullopt);
    }
    if (t.index + 1 == f.cases) end_family(f);
  }

  void end_family(const FamilyRun& f) {
    progress_->finish("done");
    progress_.reset();
    // A family's route targets are shares of its random cases: with none (--cases 0) there is nothing to judge.
    // Class targets (the value_class family) count examples too, so they are judged with no random cases.
    const std::string short_of_target =
        (random_cases_ > 0 ? check_targets(*f.family, random_routes_) : "") + check_class_targets(*f.family, class_runs_);
    if (!short_of_target.empty()) record(Outcome::fail, f.family->name, "route-targets", short_of_target, 0);
    const std::string missed_aims = check_aims(*f.family, example_results_, aims_);
    if (!missed_aims.empty()) record(Outcome::fail, f.family->name, "aims", missed_aims, 0);
    for (const std::string& why : aims_unreachable_here(*f.family, aims_)) {
      out_ << "  " << f.family->name << ": aim not reachable here: " << why << "\n";
    }
    out_ << "  " << f.family->name << ": " << f.cases << " cases (" << f.examples << " boundary, "
         << f.cases - f.examples << " random): OK " << counts_[Outcome::ok] << ", FAIL " << counts_[Outcome::fail]
         << ", NOT_SUPPORTED " << counts_[Outcome::not_supported] << ", SKIPPED " << counts_[Outcome::skipped]
         << (random_cases_ == 0 ? "; route targets not judged (no random cases)"
             : short_of_target.empty() ? "" : "; targets missed: " + short_of_target)
         << "\n";
  }

  // Every route's tokens must hash like the first route's.
  void model_route(const Task& t, const Arrived& a) {
    const ModelRoute& route = t.model;
    std::string detail = a.ok ? a.result.at("detail").get<std::string>() : a.failure;
    if (a.ok && detail.empty()) {
      const std::string hash = a.result.at("token_sha256");
      if (model_first_.empty()) model_first_ = hash;
      if (hash != model_first_) detail = "token hash " + hash + ", expected " + model_first_ + " (the first route's)";
    }
    record(detail.empty() ? Outcome::ok : Outcome::fail, "model", route.label, detail,
           a.ok ? a.result.at("seconds").get<double>() : 0);
    if (t.index + 1 == plan_.model_tasks) {
      progress_->finish("done");
      progress_.reset();
      const ModelSpec spec;
      out_ << "level 3, model: " << spec.layers + 1 << " operator calls per prompt of " << spec.tokens << " tokens, "
           << plan_.model_tasks << " routes x 3 repeats, token hash " << model_first_ << "\n";
    }
  }

  // Each seed8 digest against the golden manifest's.
  void golden_case(const Task& t, const Arrived& a) {
    if (!golden_manifest_) golden_manifest_ = nvh::parse_manifest(golden_.text, golden_.source + " (built in)");
    const std::string name = t.spec.name();
    std::string detail = a.failure;
    if (a.ok) {
      const std::string digest = a.result.at("y_sha256");
      manifest_.cases["golden/" + name] = digest;
      const auto it = golden_manifest_->cases.find(name);
      if (it == golden_manifest_->cases.end()) {
        detail = "not in " + golden_.source;
      } else if (it->second != digest) {
        detail = "digest " + digest + ", " + golden_.source + " has " + it->second;
      } else {
        ++golden_equal_;
      }
    }
    record(detail.empty() ? Outcome::ok : Outcome::fail, "golden", name, detail,
           a.ok ? a.result.at("seconds").get<double>() : 0);
    if (!detail.empty()) {
      const auto golden = golden_manifest_->cases.find(name);
      CaseSpec spec = t.spec;
      spec.family = "golden";  // the level it failed in (the family is no part of the inputs)
      write_repro_of(spec, a.ok ? a.result.at("route").get<std::string>() : "",
                     a.ok ? a.result.at("y_sha256").get<std::string>() : "", detail,
                     golden == golden_manifest_->cases.end()
                         ? std::nullopt
                         : std::optional<ExpectedDigest>({golden->second, golden_.source + " (built in)"}));
    }
    if (t.index + 1 == plan_.golden_tasks) {
      progress_->finish("done");
      progress_.reset();
      // A golden case the list no longer has would otherwise go unnoticed.
      std::size_t stale = 0;
      for (const auto& [golden_name, digest] : golden_manifest_->cases) {
        const bool listed = std::any_of(plan_.tasks.begin(), plan_.tasks.end(), [&](const Task& g) {
          return g.level == Level::golden && g.spec.name() == golden_name;
        });
        if (!listed) {
          record(Outcome::fail, "golden", golden_name, "in " + golden_.source + " but not in the seed8 list", 0);
          ++stale;
        }
      }
      out_ << "level 4, golden: " << golden_equal_ << " of " << plan_.golden_tasks << " seed8 digests equal to "
           << golden_.source << " (built in)" << (stale ? ", " + std::to_string(stale) + " golden cases not in the list" : "")
           << "\n";
    }
  }

  // A failing case's repro folder (properties/repro.h); the expected digest is
  // the reference's unless given. A repro that cannot be written is said, and
  // the run goes on: the verdicts matter more.
  void write_repro_of(const CaseSpec& spec, const std::string& route, const std::string& got, const std::string& detail,
                      const std::optional<ExpectedDigest>& expected) {
    try {
      const ExpectedDigest e = expected ? *expected : reference_digest(spec, make_inputs(spec));
      repros_.push_back(write_repro(o_.out_dir, spec, {route, backend_, arch_, o_.seed, e.sha256, e.from, got, detail}));
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
  std::map<Outcome, int> counts_;   // of the current group
  std::vector<Route> random_routes_;  // of the current family
  std::vector<ClassRun> class_runs_;  // every passing case's value class and routes, current family
  std::vector<ExampleResult> example_results_;  // the current family's examples, for its aims
  std::string model_first_;
  std::optional<nvh::Manifest> golden_manifest_;
  std::size_t golden_equal_ = 0;
  std::string backend_, arch_;
  std::vector<std::string> repros_;
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint64_t, uint64_t>> probes_;
};

// ---------------------------------------------------------------------------

std::vector<nvh::BranchSite> branch_sites(const std::vector<nvh::probe::SiteCount>& counts, const std::string& root) {
  std::vector<nvh::BranchSite> sites;
  for (const nvh::probe::SiteCount& c : counts) {
    const std::string file = c.file < kProbeFileCount ? kProbeFiles[c.file] : "unknown_probe_file_" + std::to_string(c.file);
    sites.push_back({root + "/" + file, c.line, c.taken, c.not_taken});
  }
  return sites;
}

std::string write_outputs(const std::string& dir, const std::vector<nvh::JUnitSuite>& suites, const nvh::Manifest& manifest) {
  nvh::write_junit_xml(suites, dir + "/junit.xml");
  nvh::write_manifest(manifest, dir + "/manifest.json");
  return dir + "/junit.xml, " + dir + "/manifest.json, " + dir + "/routes.jsonl";
}

// The launches the workers appended to the run's route log (none: no file).
std::vector<nvh::LaunchRecord> logged_launches(const std::string& route_log) {
  return std::filesystem::exists(route_log) ? nvh::read_route_log(route_log) : std::vector<nvh::LaunchRecord>{};
}

// `argument` names the option the folder comes from, for the message.
void make_folder(const std::string& argument, const std::string& dir) {
  if (dir.empty()) return;  // the current folder
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw std::invalid_argument("run_verify: " + argument + " = " + dir + ": cannot create the folder: " + error.message());
  }
}

}  // namespace

int run_verify(const BackendFactory& make_backend, const VerifyOptions& o, std::ostream& out) {
  const auto start = Clock::now();
  if (o.out_dir.empty()) throw std::invalid_argument("run_verify: out_dir = \"\": must name a folder");
  make_folder("out_dir", o.out_dir);
  // Workers append their launches here (each record one O_APPEND write, so
  // they interleave whole lines); the gate reads the file back.
  const std::string route_log = o.out_dir + "/routes.jsonl";
  std::filesystem::remove(route_log);
  std::filesystem::remove_all(o.out_dir + "/repro");  // a previous run's failures are not this run's
  nvh::RouteRecorder::global().clear();
  nvh::RouteRecorder::global().set_log_path(route_log);

  // In process, the one backend serves the description and every task.
  const nvh::Isolation isolation = o.isolate ? nvh::Isolation::forked : nvh::Isolation::in_process;
  std::shared_ptr<nvh::Backend> shared = o.isolate ? nullptr : std::shared_ptr<nvh::Backend>(make_backend());
  auto backend_here = [&]() -> std::shared_ptr<nvh::Backend> { return shared ? shared : make_backend(); };
  std::string description;
  nvh::run_tasks(
      1, [&] { return std::make_unique<DescribeWorker>(backend_here); }, isolation,
      [&](std::size_t, const nvh::TaskOutcome& d) {
        const std::string threw = "threw: ";  // the backend's own message, as in process
        if (d.failure.rfind(threw, 0) == 0) throw nvh::BackendUnavailable(d.failure.substr(threw.size()));
        if (!d.returned) throw std::runtime_error("verify: the worker making the backend " + d.failure);
        description = d.result;
      });
  const BackendInfo info = parse_info(description);

  const int random_cases = o.random_cases >= 0 ? o.random_cases : info.host ? 25 : 200;
  out << "nvfp4-harness verify on " << info.name << " (" << info.arch << ", " << info.device_name << "), seed "
      << o.seed << (o.isolate ? "" : ", in process (--no-fork)") << "\n";

  Tally tally;
  std::vector<nvh::JUnitSuite> suites;
  nvh::Manifest manifest;
  manifest.backend = info.name;
  manifest.arch = info.arch;
  manifest.tool = "nvfp4-harness verify";
  if (o.primitives) suites.push_back(verify_primitives(out, tally));
  else out << "level 1, primitives: skipped (--skip primitives)\n";
  if (!o.model) out << "level 3, model: skipped (--skip model)\n";
  if (!o.golden) out << "level 4, golden: skipped (--skip golden)\n";

  const Golden golden = golden_for(info);
  const Plan plan = make_plan(o, random_cases, golden);
  Collector collector(plan, o, golden, info.aims, random_cases, out, tally, suites, manifest);
  collector.set_backend(info);
  collector.start();
  nvh::run_tasks(
      plan.tasks.size(), [&] { return std::make_unique<VerifyWorker>(backend_here(), plan, o); }, isolation,
      [&](std::size_t i, const nvh::TaskOutcome& r) { collector.on_task(i, r); },
      [&](const std::string& counts) { collector.on_finish(counts); });
  collector.finish();

  // The gate judges the launches of this run only. A run of some families
  // cannot be expected to reach every route: its gate is shown, not judged.
  const nvh::GateReport gate = nvh::evaluate_gate(gate_declaration(), info.gates, logged_launches(route_log));
  nvh::RouteRecorder::global().set_log_path("");
  const std::string not_judged =
      o.families.empty() ? ""
                         : "--family selects " + std::to_string(plan.families.size()) + " of " +
                               std::to_string(all_families().size()) + " families";
  out << "\nroute coverage:\n" << nvh::render_gate_text(gate, not_judged);
  if (not_judged.empty() && !gate.passed()) tally.add(Outcome::fail, "route-coverage-gate", "see the route table");
  std::ofstream(o.out_dir + "/route_gate.txt") << nvh::render_gate_text(gate, not_judged);
  std::ofstream(o.out_dir + "/route_gate.json") << nvh::render_gate_json(gate, not_judged);
  if (!o.device_coverage.empty()) {  // kernel branch coverage next to the route table
    const std::string root = o.source_root.empty()
                                 ? std::filesystem::path(__FILE__).parent_path().parent_path().string()
                                 : o.source_root;
    const std::vector<nvh::BranchSite> sites = branch_sites(collector.probe_counts(), root);
    make_folder("device_coverage's folder", std::filesystem::path(o.device_coverage).parent_path().string());
    nvh::write_lcov_tracefile(o.device_coverage, "probes_" + info.arch, sites);
    out << "\nkernel branch coverage (probes, " << info.arch << "): "
        << nvh::render_trace_summary(sites, 20, root + "/") << "wrote " << o.device_coverage << "\n";
  }

  out << "\nwrote " << write_outputs(o.out_dir, suites, manifest) << "\n";
  if (!collector.repros().empty()) {
    out << "wrote " << collector.repros().size() << " repro folder(s) of failing cases under " << o.out_dir
        << "/repro (each README.txt says how to rerun its case)\n";
  }
  out << "summary: OK " << tally.counts[Outcome::ok] << ", FAIL " << tally.counts[Outcome::fail] << ", NOT_SUPPORTED "
      << tally.counts[Outcome::not_supported] << ", SKIPPED " << tally.counts[Outcome::skipped] << "; "
      << (!not_judged.empty() ? "gate not judged: " + not_judged
          : gate.passed()     ? std::string("route gate passed")
                              : std::string("route gate FAILED"))
      << "; " << seconds_since(start) << " s\n";
  for (std::size_t i = 0; i < tally.failures.size() && i < 20; ++i) out << "  FAIL " << tally.failures[i] << "\n";
  if (tally.failures.size() > 20) out << "  ... and " << tally.failures.size() - 20 << " more (see junit.xml)\n";
  return tally.failures.empty() ? 0 : 1;
}

}  // namespace nvfp4
