#include "properties/verify_job.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

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
#include "properties/families.h"
#include "properties/model_prefill.h"
#include "properties/route_coverage.h"
#include "properties/verify_case.h"
#include "reference/toolkit_crosscheck.h"

namespace nvfp4 {
namespace {

using Clock = std::chrono::steady_clock;

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

// Level 1: the format itself, against the toolkit's own conversions.
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

// Level 2: one family, boundary examples first, then random cases.
nvh::JUnitSuite verify_family(nvh::Backend& backend, const Family& f, int random_cases, uint64_t seed,
                              nvh::Manifest& manifest, Tally& tally, std::ostream& out) {
  nvh::JUnitSuite suite{f.name, {}};
  std::vector<CaseSpec> cases = f.examples;
  const std::size_t examples = cases.size();
  for (const CaseSpec& s : sample_family(f, random_cases, seed)) cases.push_back(s);

  nvh::Progress progress(f.name, cases.size());
  std::map<Outcome, int> counts;
  std::vector<Route> random_routes;
  std::vector<ClassRun> class_runs;  // every passing case's value class and routes
  std::vector<ExampleResult> example_results;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CaseSpec& spec = cases[i];
    progress.update(i, spec.name());
    nvh::RecordContext context(f.name, spec.name());
    const auto start = Clock::now();
    CaseVerdict v;
    try {
      v = verify_case(backend, spec);
    } catch (const std::exception& e) {
      v.outcome = Outcome::fail;
      v.detail = std::string("threw: ") + e.what();
    }
    ++counts[v.outcome];
    tally.add(v.outcome, f.name + "/" + spec.name(), v.detail);
    suite.cases.push_back(junit_case(spec.name(), f.name, v.outcome, v.detail, seconds_since(start)));
    if (!v.y_sha256.empty()) manifest.cases[f.name + "/" + spec.name()] = v.y_sha256;
    if (i >= examples && v.outcome == Outcome::ok) random_routes.push_back(*parse_route(v.route));
    if (v.outcome == Outcome::ok) class_runs.push_back({spec.value_class, v.routes_run});
    if (i < examples) example_results.push_back({spec, v});
  }
  progress.finish("done");

  const std::string short_of_target = check_targets(f, random_routes) + check_class_targets(f, class_runs);
  if (!short_of_target.empty()) {
    tally.add(Outcome::fail, f.name + "/route-targets", short_of_target);
    suite.cases.push_back(junit_case("route-targets", f.name, Outcome::fail, short_of_target, 0));
  }
  const AimContext aim_here = aim_context(backend);
  const std::string missed_aims = check_aims(f, example_results, aim_here);
  if (!missed_aims.empty()) {
    tally.add(Outcome::fail, f.name + "/aims", missed_aims);
    suite.cases.push_back(junit_case("aims", f.name, Outcome::fail, missed_aims, 0));
  }
  for (const std::string& why : aims_unreachable_here(f, aim_here)) out << "  " << f.name << ": aim not reachable here: " << why << "\n";
  out << "  " << f.name << ": " << cases.size() << " cases (" << examples << " boundary, " << random_cases
      << " random): OK " << counts[Outcome::ok] << ", FAIL " << counts[Outcome::fail] << ", NOT_SUPPORTED "
      << counts[Outcome::not_supported] << ", SKIPPED " << counts[Outcome::skipped]
      << (short_of_target.empty() ? "" : "; targets missed: " + short_of_target) << "\n";
  return suite;
}

// Level 3: the synthetic prefill's tokens on every route.
nvh::JUnitSuite verify_model(nvh::Backend& backend, Tally& tally, std::ostream& out) {
  nvh::JUnitSuite suite{"model", {}};
  const ModelSpec spec;
  std::string first;
  for (const ModelRoute& route : model_routes()) {
    nvh::RecordContext context("model", route.label);
    const auto start = Clock::now();
    Outcome o = Outcome::ok;
    std::string detail;
    try {
      for (int repeat = 0; repeat < 3; ++repeat) {
        const ModelRun run = run_model(backend, spec, route);
        if (first.empty()) first = run.token_sha256;
        if (run.token_sha256 != first) {
          o = Outcome::fail;
          detail = "token hash " + run.token_sha256 + " on repeat " + std::to_string(repeat) + ", expected " + first;
          break;
        }
      }
    } catch (const std::exception& e) {
      o = Outcome::fail;
      detail = std::string("threw: ") + e.what();
    }
    tally.add(o, "model/" + route.label, detail);
    suite.cases.push_back(junit_case(route.label, "model", o, detail, seconds_since(start)));
  }
  out << "level 3, model: " << spec.layers + 1 << " operator calls per prompt of " << spec.tokens
      << " tokens, " << model_routes().size() << " routes x 3 repeats, token hash " << first << "\n";
  return suite;
}

// The kernel probes of this run (reset at its start) as lcov branch sites:
// the GPU's counters on a GPU backend, the host executor's otherwise.
std::vector<nvh::BranchSite> probe_sites(const nvh::Backend& backend, const std::string& root) {
  const auto which = backend.kind() == nvh::BackendKind::host ? nvh::probe::Counters::host : nvh::probe::Counters::device;
  std::vector<nvh::BranchSite> sites;
  for (const nvh::probe::SiteCount& c : nvh::probe::read_counts(which)) {
    const std::string file = c.file < kProbeFileCount ? kProbeFiles[c.file] : "unknown_probe_file_" + std::to_string(c.file);
    sites.push_back({root + "/" + file, c.line, c.taken, c.not_taken});
  }
  return sites;
}

std::string write_outputs(const std::string& dir, const std::vector<nvh::JUnitSuite>& suites, const nvh::Manifest& manifest) {
  std::filesystem::create_directories(dir);
  nvh::write_junit_xml(suites, dir + "/junit.xml");
  nvh::write_manifest(manifest, dir + "/manifest.json");
  return dir + "/junit.xml, " + dir + "/manifest.json, " + dir + "/routes.jsonl";
}

}  // namespace

int run_verify(nvh::Backend& backend, const VerifyOptions& o, std::ostream& out) {
  const auto start = Clock::now();
  std::filesystem::create_directories(o.out_dir);
  const std::string route_log = o.out_dir + "/routes.jsonl";
  std::filesystem::remove(route_log);
  nvh::RouteRecorder::global().clear();
  nvh::RouteRecorder::global().set_log_path(route_log);
  if (!o.device_coverage.empty()) nvh::probe::reset_counts();  // count this run only

  const int random_cases = o.random_cases >= 0 ? o.random_cases : backend.kind() == nvh::BackendKind::host ? 25 : 200;
  out << "nvfp4-harness verify on " << backend.name() << " (" << backend.arch() << ", " << backend.caps().device_name
      << "), seed " << o.seed << "\n";

  Tally tally;
  std::vector<nvh::JUnitSuite> suites;
  nvh::Manifest manifest;
  manifest.backend = backend.name();
  manifest.arch = backend.arch();
  manifest.tool = "nvfp4-harness verify";
  if (o.primitives) suites.push_back(verify_primitives(out, tally));

  out << "level 2, operator:\n";
  for (const Family& f : all_families()) {
    if (!o.families.empty() && std::find(o.families.begin(), o.families.end(), f.name) == o.families.end()) continue;
    suites.push_back(verify_family(backend, f, random_cases, o.seed, manifest, tally, out));
  }
  if (o.model) suites.push_back(verify_model(backend, tally, out));

  // The gate judges the launches of this run only.
  const nvh::GateReport gate =
      nvh::evaluate_gate(gate_declaration(), hardware_gates(backend), nvh::RouteRecorder::global().records());
  nvh::RouteRecorder::global().set_log_path("");
  out << "\nroute coverage:\n" << nvh::render_gate_text(gate);
  const bool whole_run = o.families.empty();  // a filtered run cannot be expected to reach every route
  if (whole_run && !gate.passed()) tally.add(Outcome::fail, "route-coverage-gate", "see the route table");
  std::ofstream(o.out_dir + "/route_gate.txt") << nvh::render_gate_text(gate);
  std::ofstream(o.out_dir + "/route_gate.json") << nvh::render_gate_json(gate);
  if (!o.device_coverage.empty()) {  // kernel branch coverage next to the route table
    const std::string root = o.source_root.empty()
                                 ? std::filesystem::path(__FILE__).parent_path().parent_path().string()
                                 : o.source_root;
    const std::vector<nvh::BranchSite> sites = probe_sites(backend, root);
    nvh::write_lcov_tracefile(o.device_coverage, "probes_" + backend.arch(), sites);
    out << "\nkernel branch coverage (probes, " << backend.arch() << "): "
        << nvh::render_trace_summary(sites, 20, root + "/") << "wrote " << o.device_coverage << "\n";
  }

  out << "\nwrote " << write_outputs(o.out_dir, suites, manifest) << "\n";
  out << "summary: OK " << tally.counts[Outcome::ok] << ", FAIL " << tally.counts[Outcome::fail] << ", NOT_SUPPORTED "
      << tally.counts[Outcome::not_supported] << ", SKIPPED " << tally.counts[Outcome::skipped] << "; route gate "
      << (gate.passed() ? "passed" : whole_run ? "FAILED" : "not judged (families filtered)") << "; "
      << seconds_since(start) << " s\n";
  for (std::size_t i = 0; i < tally.failures.size() && i < 20; ++i) out << "  FAIL " << tally.failures[i] << "\n";
  if (tally.failures.size() > 20) out << "  ... and " << tally.failures.size() - 20 << " more (see junit.xml)\n";
  return tally.failures.empty() ? 0 : 1;
}

}  // namespace nvfp4
