#include "properties/nvfp4_matmul/suite.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "harness/manifest.h"
#include "kernels/nvfp4_matmul/probes.h"
#include "kernels/nvfp4_matmul/route_table.h"
#include "properties/nvfp4_matmul/case_lists.h"
#include "properties/nvfp4_matmul/families.h"
#include "properties/nvfp4_matmul/golden_manifests.h"
#include "properties/nvfp4_matmul/model_prefill.h"
#include "properties/nvfp4_matmul/repro.h"
#include "properties/nvfp4_matmul/route_coverage.h"
#include "properties/nvfp4_matmul/verify_case.h"
#include "reference/nvfp4_matmul/toolkit_crosscheck.h"

namespace nvfp4 {
namespace {

using json = nlohmann::json;

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

// ---------------------------------------------------------------------------
// The golden manifest a backend's seed8 digests must equal, or why there is none.

struct Golden {
  std::string source;  // "properties/nvfp4_matmul/golden/seed8.host.json"; empty: none
  const nvh::Manifest* manifest = nullptr;  // parsed once per process; null: none
  std::string skipped_why;
};

Golden golden_for(bool host, const std::string& arch) {
  static const nvh::Manifest host_manifest =
      nvh::parse_manifest(kGoldenSeed8Host, "seed8.host.json (built in)");
  static const nvh::Manifest h200_manifest =
      nvh::parse_manifest(kGoldenSeed8H200, "seed8.h200.json (built in)");
  if (host) return {"properties/nvfp4_matmul/golden/seed8.host.json", &host_manifest, ""};
  if (arch == "sm_90")
    return {"properties/nvfp4_matmul/golden/seed8.h200.json", &h200_manifest, ""};
  return {"", nullptr,
          "the golden GPU manifest (properties/nvfp4_matmul/golden/seed8.h200.json) is for the "
          "H200 (sm_90) only; this device is " +
              arch};
}

std::vector<std::string> model_labels() {
  std::vector<std::string> labels;
  for (const ModelRoute& r : model_routes()) labels.push_back(r.label);
  return labels;
}

ModelRoute model_route_labelled(const std::string& label) {
  for (const ModelRoute& r : model_routes()) {
    if (r.label == label) return r;
  }
  throw std::invalid_argument("check_case_key: key = model/" + label +
                              ": the model has no way labelled \"" + label +
                              "\" (its ways: " + joined(model_labels()) + ")");
}

// ---------------------------------------------------------------------------
// A family case's evidence: what its family's class targets and aims are
// judged on (families.h), beyond outcome, route and digest.

std::string evidence_of(const CaseVerdict& v) {
  json routes_run = json::array();
  for (Route r : v.routes_run) routes_run.push_back(route_name(r));
  const AddressClasses& a = v.addresses;
  return json{
      {"routes_run", routes_run},
      {"reason", v.reason},
      {"decision",
       {route_name(v.decision.route), v.decision.variant, v.decision.reason, v.decision.detail}},
      {"addresses", {a.A, a.B, a.weight_scale, a.weight_scale_2, a.bias, a.Y, a.scratch}}}
      .dump();
}

CaseVerdict verdict_from(const nvh::CaseResult& r) {
  CaseVerdict v;
  v.outcome = r.outcome;
  v.route = r.route;
  v.detail = r.detail;
  v.y_sha256 = r.digest;
  if (r.evidence.empty()) return v;  // a crashed case: no evidence
  const json e = json::parse(r.evidence);
  for (const json& name : e.at("routes_run"))
    v.routes_run.push_back(*parse_route(name.get<std::string>()));
  const json& d = e.at("decision");
  v.decision.route = *parse_route(d.at(0).get<std::string>());
  v.decision.variant = d.at(1).get<std::string>();
  v.decision.reason = d.at(2).get<std::string>();
  v.decision.detail = d.at(3).get<std::string>();
  v.reason = e.at("reason").get<std::string>();
  const json& a = e.at("addresses");
  v.addresses = {a.at(0), a.at(1), a.at(2), a.at(3), a.at(4), a.at(5), a.at(6)};
  return v;
}

AimContext aims_of(const nvh::BackendDescription& backend) {
  AimContext aims;
  aims.kind = backend.host ? nvh::BackendKind::host : nvh::BackendKind::cuda;
  if (backend.context.empty()) return aims;
  const json j = json::parse(backend.context);
  aims.multiprocessors = j.at("multiprocessors").get<int>();
  aims.native_missing = j.at("native_missing").get<std::string>();
  aims.wgmma = j.at("wgmma").get<bool>();
  return aims;
}

class Nvfp4Suite : public nvh::OperatorSuite {
 public:
  std::string name() const override { return "nvfp4_matmul"; }
  std::string tool() const override { return "nvfp4-harness"; }
  std::string routes_text() const override { return route_table_text(); }
  nvh::GateDeclaration gate_declaration() const override { return nvfp4::gate_declaration(); }
  nvh::HardwareGates hardware_gates(const nvh::Backend& backend) const override {
    return nvfp4::hardware_gates(backend);
  }
  std::string describe(const nvh::Backend& backend) const override {
    const AimContext aims = aim_context(backend);
    return json{{"multiprocessors", aims.multiprocessors},
                {"native_missing", aims.native_missing},
                {"wgmma", aims.wgmma}}
        .dump();
  }

  std::vector<std::string> family_names() const override {
    std::vector<std::string> names;
    for (const Family& f : all_families()) names.push_back(f.name);
    return names;
  }
  std::string family_aim(const std::string& family) const override {
    return find_family(family)->aim;
  }
  nvh::CaseGroup family_group(const std::string& family, int random, uint64_t seed) const override {
    const Family& f = *find_family(family);
    nvh::CaseGroup g{f.name, {}, f.examples.size(), "", ""};
    for (const CaseSpec& s : f.examples) g.cases.push_back(s.name());
    for (const CaseSpec& s : sample_family(f, random, seed)) g.cases.push_back(s.name());
    return g;
  }
  std::vector<nvh::CaseGroup> other_groups(const nvh::BackendDescription& backend) const override {
    nvh::CaseGroup model{"model", model_labels(), 0, "model", ""};
    nvh::CaseGroup golden{"golden", {}, 0, "golden seed8", ""};
    golden.skipped_why = golden_for(backend.host, backend.arch).skipped_why;
    if (golden.skipped_why.empty()) {
      for (const CaseSpec& s : named_case_list("seed8")) golden.cases.push_back(s.name());
    }
    return {model, golden};
  }
  std::vector<std::string> skippable() const override { return {"primitives", "model", "golden"}; }
  void check_case(const std::string& group, const std::string& case_name) const override {
    if (group == "model") {
      model_route_labelled(case_name);
      return;
    }
    parse_case_key(group + "/" + case_name);
  }

  nvh::CaseResult run_case(nvh::Backend& backend, const std::string& group,
                           const std::string& case_name) const override {
    if (group == "model") return run_model_way(backend, model_route_labelled(case_name));
    const CaseSpec spec = parse_case_key(group + "/" + case_name);
    if (group == "golden") return run_golden_case(backend, spec);
    CaseVerdict v = verify_case(backend, spec);
    // NOT_SUPPORTED passes only for a route this backend is hardware-gated for.
    if (v.outcome == Outcome::not_supported && !ran_or_gated(v, aim_context(backend))) {
      v.outcome = Outcome::fail;
      v.detail = "NOT_SUPPORTED on a route this backend is not gated for: " + v.detail;
    }
    return {v.outcome, v.detail, v.route, v.y_sha256, evidence_of(v), 0};
  }

  nvh::GroupJudgement judge_group(const nvh::CaseGroup& group,
                                  std::vector<nvh::CaseResult*>& results,
                                  const nvh::BackendDescription& backend,
                                  bool whole) const override {
    if (group.name == "model") return judge_model(group, results);
    if (group.name == "golden") return judge_golden(group, results, backend, whole);
    return judge_family(group, results, backend, whole);
  }

  std::string write_repro(const std::string& out_dir, const std::string& group,
                          const std::string& case_name, const nvh::CaseResult& result,
                          const nvh::BackendDescription& backend, uint64_t seed) const override {
    if (group == "model") return "";  // a way through the model, not one case's inputs
    CaseSpec spec = parse_case_key(group + "/" + case_name);
    std::optional<ExpectedDigest> expected;
    if (group == "golden") {
      spec.family = "golden";  // the group it failed in (the family is no part of the inputs)
      const Golden golden = golden_for(backend.host, backend.arch);
      if (golden.manifest) {
        const auto listed = golden.manifest->cases.find(case_name);
        if (listed != golden.manifest->cases.end())
          expected = ExpectedDigest{listed->second, golden.source + " (built in)"};
      }
    }
    const ExpectedDigest e = expected ? *expected : reference_digest(spec, make_inputs(spec));
    return nvfp4::write_repro(out_dir, spec,
                              {result.route, backend.host ? "host" : "cuda", backend.arch, seed,
                               e.sha256, e.from, result.digest, result.detail});
  }

  std::string self_check_group() const override { return "primitives"; }
  nvh::SelfCheckReport self_checks() const override {
    nvh::SelfCheckReport report{"primitives", {}, ""};
    const auto start = std::chrono::steady_clock::now();
    const ref::PrimitiveReport primitives = ref::check_primitives();
    for (const ref::PrimitiveCheck& c : primitives.checks) {
      std::string detail =
          std::to_string(c.mismatches) + " mismatches of " + std::to_string(c.compared);
      for (const auto& line : c.first_mismatches) detail += "; " + line;
      report.checks.push_back(
          {c.name, c.mismatches ? nvh::Outcome::fail : nvh::Outcome::ok, detail});
    }
    std::ostringstream line;
    line << "primitives: " << primitives.checks.size()
         << " checks against the CUDA toolkit's conversions, " << primitives.total_mismatches()
         << " mismatches ("
         << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
         << " s)\n";
    report.line = line.str();
    return report;
  }

  uint32_t probe_bank() const override { return kProbeBank; }
  std::vector<std::string> probe_files() const override {
    return std::vector<std::string>(std::begin(kProbeFiles), std::end(kProbeFiles));
  }
  std::string source_root() const override { return NVFP4_SOURCE_ROOT; }

 private:
  // Three repeats of one way through the model; their token hashes must agree
  // (judge_model compares them across ways).
  static nvh::CaseResult run_model_way(nvh::Backend& backend, const ModelRoute& route) {
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
    return {detail.empty() ? nvh::Outcome::ok : nvh::Outcome::fail, detail, "", first, "", 0};
  }

  // A seed8 digest against the golden manifest of this backend.
  static nvh::CaseResult run_golden_case(nvh::Backend& backend, const CaseSpec& spec) {
    const CaseRun run = nvfp4::run_case(backend, spec, make_inputs(spec));
    const Golden golden = golden_for(backend.kind() == nvh::BackendKind::host, backend.arch());
    nvh::CaseResult r{nvh::Outcome::ok, "", route_name(run.decision.route), run.y_sha256, "", 0};
    if (golden.source.empty()) {
      r.outcome = nvh::Outcome::skipped;
      r.detail = golden.skipped_why;
      return r;
    }
    const nvh::Manifest& manifest = *golden.manifest;
    const auto listed = manifest.cases.find(spec.name());
    if (listed == manifest.cases.end()) {
      r.outcome = nvh::Outcome::fail;
      r.detail = "not in " + golden.source;
    } else if (listed->second != run.y_sha256) {
      r.outcome = nvh::Outcome::fail;
      r.detail = "digest " + run.y_sha256 + ", " + golden.source + " has " + listed->second;
    }
    return r;
  }

  // Every way's tokens must hash like the first way's.
  static nvh::GroupJudgement judge_model(const nvh::CaseGroup& group,
                                         std::vector<nvh::CaseResult*>& results) {
    std::string first;
    for (nvh::CaseResult* r : results) {
      if (!r || r->outcome != nvh::Outcome::ok) continue;
      if (first.empty()) first = r->digest;
      if (r->digest != first) {
        r->outcome = nvh::Outcome::fail;
        r->detail = "token hash " + r->digest + ", expected " + first + " (the first route's)";
      }
    }
    const ModelSpec spec;
    std::ostringstream summary;
    summary << "model: " << spec.layers + 1 << " operator calls per prompt of " << spec.tokens
            << " tokens, " << group.cases.size() << " routes x 3 repeats, token hash " << first;
    return {{}, {}, summary.str()};
  }

  // Each seed8 digest was checked in its worker; a golden case the list no
  // longer has would otherwise go unnoticed (judged where every golden case
  // ran: not in a shard or for --case).
  static nvh::GroupJudgement judge_golden(const nvh::CaseGroup& group,
                                          const std::vector<nvh::CaseResult*>& results,
                                          const nvh::BackendDescription& backend, bool whole) {
    const Golden golden = golden_for(backend.host, backend.arch);
    nvh::GroupJudgement j;
    std::size_t ran = 0, equal = 0;
    for (const nvh::CaseResult* r : results) {
      ran += r != nullptr;
      equal += r && r->outcome == nvh::Outcome::ok;
    }
    std::size_t stale = 0;
    if (whole && !golden.source.empty()) {
      for (const auto& [golden_name, digest] : golden.manifest->cases) {
        if (std::find(group.cases.begin(), group.cases.end(), golden_name) == group.cases.end()) {
          j.failures.push_back({golden_name, "in " + golden.source + " but not in the seed8 list"});
          ++stale;
        }
      }
    }
    j.summary = "golden: " + std::to_string(equal) + " of " + std::to_string(ran) +
                " seed8 digests equal to " + golden.source + " (built in)" +
                (stale ? ", " + std::to_string(stale) + " golden cases not in the list" : "");
    return j;
  }

  // A family's route targets (shares of its random cases), class targets and
  // aims, over the whole family.
  static nvh::GroupJudgement judge_family(const nvh::CaseGroup& group,
                                          const std::vector<nvh::CaseResult*>& results,
                                          const nvh::BackendDescription& backend, bool whole) {
    nvh::GroupJudgement j;
    if (!whole) return j;
    const Family& f = *find_family(group.name);
    const AimContext aims = aims_of(backend);
    std::vector<Route> random_routes;
    std::vector<ClassRun> class_runs;
    std::vector<ExampleResult> examples;
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (!results[i]) continue;
      CaseSpec spec = parse_case_name(group.cases[i]);
      spec.family = group.name;
      const CaseVerdict v = verdict_from(*results[i]);
      if (i >= group.examples && v.outcome == Outcome::ok)
        random_routes.push_back(*parse_route(v.route));
      if (v.outcome == Outcome::ok) class_runs.push_back({spec.value_class, v.routes_run});
      if (i < group.examples) examples.push_back({spec, v});
    }
    // Route targets are shares of the random cases: with none (--cases 0)
    // there is nothing to judge. Class targets count examples too.
    const bool random = group.cases.size() > group.examples;
    const std::string short_of_target =
        (random ? check_targets(f, random_routes) : "") + check_class_targets(f, class_runs);
    if (!short_of_target.empty()) j.failures.push_back({"route-targets", short_of_target});
    const std::string missed_aims = check_aims(f, examples, aims);
    if (!missed_aims.empty()) j.failures.push_back({"aims", missed_aims});
    for (const std::string& why : aims_unreachable_here(f, aims))
      j.notes.push_back("aim not reachable here: " + why);
    if (!random) j.notes.push_back("route targets not judged (no random cases)");
    return j;
  }
};

}  // namespace

const nvh::OperatorSuite& nvfp4_suite() {
  static const Nvfp4Suite suite;
  return suite;
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
                                "\" (the families: " + joined(names) + "; and golden, model)");
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

}  // namespace nvfp4
