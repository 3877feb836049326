// nvfp4-harness: the command line. This file is the composition root: the
// one place in harness/ that names the NVFP4 operator, wiring its case
// families, manifests and benchmarks to the operator-agnostic machinery.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_job.h"
#include "bench/replay.h"
#include "harness/backend.h"
#include "harness/manifest.h"
#include "harness/probe.h"
#include "harness/progress.h"
#include "harness/route_gate.h"
#include "harness/route_record.h"
#include "kernels/dispatch.h"
#include "kernels/nvfp4_matmul.h"
#include "properties/case_lists.h"
#include "properties/families.h"
#include "properties/route_coverage.h"
#include "properties/matmul_case.h"
#include "properties/verify_job.h"
#include "reference/toolkit_crosscheck.h"

namespace {

// "best" is the GPU when one can be used, else the host executor.
std::unique_ptr<nvh::Backend> backend_named(const std::string& name) {
  if (name == "host") return nvh::make_host_backend();
  if (name == "cuda") return nvh::make_cuda_backend();
  return nvh::make_best_backend();
}

int cmd_primitives() {
  const auto report = nvfp4::ref::check_primitives();
  std::cout << report.to_text();
  std::cout << (report.total_mismatches() ? "FAIL" : "OK") << ": " << report.total_mismatches() << " mismatches\n";
  return report.total_mismatches() ? 1 : 0;
}

int cmd_routes() {
  for (nvfp4::Route r : nvfp4::kAllRoutes) {
    std::cout << nvfp4::route_name(r) << ":";
    for (const auto& reason : nvfp4::route_reasons(r)) std::cout << " " << reason;
    std::cout << "\n";
  }
  return 0;
}

int cmd_hash(const std::string& backend_name, const std::string& list, const std::string& out, const std::string& argv0) {
  auto backend = backend_named(backend_name);
  const auto cases = nvfp4::named_case_list(list);
  nvh::Manifest m;
  m.backend = backend->name();
  m.arch = backend->arch();
  m.tool = "nvfp4-harness hash";
  m.created_by = argv0 + " hash --cases " + list;
  m.metadata["case_list"] = list;
  nvh::Progress progress("hash " + list, cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    progress.update(i, cases[i].name());
    const nvfp4::CaseRun run = nvfp4::run_case(*backend, cases[i], nvfp4::make_inputs(cases[i]));
    m.add_case(cases[i].name(), run.y_sha256);
  }
  progress.finish("done");
  nvh::write_manifest(m, out);
  std::cout << "wrote " << cases.size() << " digests from " << m.backend << " (" << m.arch << ") to " << out << "\n";
  return 0;
}

int cmd_bench(const nvfp4::BenchOptions& o) {
  auto backend = nvh::make_cuda_backend();
  const nvfp4::BenchReport report = nvfp4::run_bench(*backend, o, std::cerr);
  std::cout << nvfp4::render_bench_table(report);
  std::filesystem::path json(o.json_path);
  if (json.has_parent_path()) std::filesystem::create_directories(json.parent_path());
  std::ofstream(o.json_path) << nvfp4::render_bench_json(report);
  std::cout << "wrote " << o.json_path << "\n";
  return 0;
}

// The manifest is read and planned before any GPU is asked for, so a bad
// manifest fails the same way everywhere; --dry-run stops there.
int cmd_replay(const std::string& path, const nvfp4::ReplayOptions& o, const std::string& route, const std::string& json_path,
               bool dry_run) {
  nvfp4::ReplayOptions options = o;
  options.route = *nvfp4::parse_replay_route(route);
  const nvfp4::ReplayManifest m = nvfp4::read_replay_manifest(path);
  if (dry_run) {
    nvfp4::Caps sm90;  // as the H200 would decide
    sm90.sm = 90;
    sm90.backend = "dry run";
    std::cout << nvfp4::render_replay_plan(m, nvfp4::plan_replay(m, options, sm90));
    return 0;
  }
  std::unique_ptr<nvh::Backend> backend;
  try {
    backend = nvh::make_cuda_backend();
  } catch (const nvh::BackendUnavailable& e) {
    throw nvh::BackendUnavailable(std::string("replay: a replay times a GPU: ") + e.what() +
                                  " (--dry-run checks the manifest and prints the plan without one)");
  }
  const nvfp4::ReplayReport report = nvfp4::run_replay(*backend, m, options, std::cerr);
  std::cout << nvfp4::render_replay_table(report);
  if (!json_path.empty()) {
    std::filesystem::path json(json_path);
    if (json.has_parent_path()) std::filesystem::create_directories(json.parent_path());
    std::ofstream(json_path) << nvfp4::render_replay_json(report);
    std::cout << "wrote " << json_path << "\n";
  }
  return 0;
}

int cmd_gate(const std::vector<std::string>& logs, const std::string& backend_name) {
  auto backend = backend_named(backend_name);
  const auto records = nvh::read_route_logs(logs);
  const nvh::GateReport report =
      nvh::evaluate_gate(nvfp4::gate_declaration(), nvfp4::hardware_gates(*backend), records);
  std::cout << records.size() << " launch records from " << logs.size() << " path(s); hardware gates as on "
            << backend->name() << " (" << backend->arch() << ")\n\n"
            << nvh::render_gate_text(report);
  return report.passed() ? 0 : 1;
}

int cmd_compare(const std::string& a, const std::string& b) {
  const nvh::ManifestDiff diff = nvh::compare(nvh::read_manifest(a), nvh::read_manifest(b));
  std::cout << nvh::render_diff(diff, a, b);
  return diff.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nvfp4-harness: proves every dispatch route of the NVFP4 matmul is reached and computes the right bits"};
  app.require_subcommand(1);
  std::string backend = "best";

  auto* verify = app.add_subcommand("verify", "the main job: primitives, every case family, the model prefill, the route gate");
  nvfp4::VerifyOptions vo;
  verify->add_option("--backend", backend, "best (the GPU if usable, else host), host or cuda")
      ->check(CLI::IsMember({"best", "host", "cuda"}));
  verify->add_option("--family", vo.families, "run only these families (repeatable); the gate is then not judged");
  verify->add_option("--cases", vo.random_cases, "random cases per family (default: 25 on the host, 200 on a GPU)")
      ->check(CLI::Range(0, 100000));
  verify->add_option("--seed", vo.seed, "seed of the random cases");
  verify->add_option("--out", vo.out_dir, "folder for routes.jsonl, manifest.json, junit.xml")->capture_default_str();
  bool list_families = false;
  verify->add_flag("--list", list_families, "list the families and exit");
  verify->add_option("--device-coverage", vo.device_coverage,
                     "write this run's kernel branch probe counts (GPU, or host executor) as an lcov tracefile; "
                     "needs a probe build (NVFP4_DEVICE_PROBES, preset cuda-probes)");
  verify->add_option("--source-root", vo.source_root,
                     "source tree the tracefile's paths point into (default: the one this was built from)");

  app.add_subcommand("primitives", "level 1 alone: the NVFP4 codecs against the CUDA toolkit's conversions");
  app.add_subcommand("routes", "the routes and the reasons the dispatcher may take each for");

  auto* hash = app.add_subcommand("hash", "write a hash manifest {case name -> SHA-256 of Y} for a named case list");
  std::string list = "seed8", out;
  hash->add_option("--backend", backend, "best, host or cuda")->check(CLI::IsMember({"best", "host", "cuda"}));
  hash->add_option("--cases", list, "case list")->capture_default_str();
  hash->add_option("--out", out, "manifest file to write")->required();

  auto* cmp = app.add_subcommand("compare", "report the cases whose digests differ between two manifests");
  std::string a, b;
  cmp->add_option("A", a, "first manifest")->required()->check(CLI::ExistingFile);
  cmp->add_option("B", b, "second manifest")->required()->check(CLI::ExistingFile);

  auto* gate = app.add_subcommand("gate", "the route-coverage gate over route logs (JSON lines) written by test runs");
  std::vector<std::string> logs;
  gate->add_option("LOGS", logs, "route log files, or folders of *.jsonl")->required();
  gate->add_option("--backend", backend, "whose hardware gates apply: best, host or cuda")
      ->check(CLI::IsMember({"best", "host", "cuda"}));

  auto* bench = app.add_subcommand("bench", "time every route at the seed's and the decode shapes against the copy ceiling (GPU)");
  nvfp4::BenchOptions bo;
  bench->add_option("--group", bo.groups, "prefill, sweep or decode (repeatable; default all)")
      ->check(CLI::IsMember({"prefill", "sweep", "decode"}));
  bench->add_option("--reps", bo.reps, "timed launches per case (median taken)")->check(CLI::Range(100, 100000))->capture_default_str();
  bench->add_option("--warmup", bo.warmup, "untimed launches first")->check(CLI::Range(1, 10000))->capture_default_str();
  bench->add_option("--json", bo.json_path, "where to write the JSON report")->capture_default_str();

  auto* replay = app.add_subcommand(
      "replay", "replay a model's matmuls for a prompt in prefill chunks; GPU time in dequant, GEMM and bias per route (GPU)");
  std::string replay_manifest, replay_route = "natural", replay_json;
  nvfp4::ReplayOptions ro;
  bool replay_dry_run = false;
  replay->add_option("MANIFEST", replay_manifest, "model manifest (JSON), e.g. bench/manifests/qwen_like_prefill.json")
      ->required()
      ->check(CLI::ExistingFile);
  replay->add_option("--prompt", ro.prompt, "prompt tokens")->check(CLI::Range(int64_t{1}, int64_t{1} << 30))->capture_default_str();
  replay->add_option("--chunk", ro.chunk, "tokens per prefill chunk (M of every call; the last chunk may be shorter)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  replay->add_option("--route", replay_route, "natural (the dispatcher decides), or force prefill_scalar or prefill_vec8")
      ->check(CLI::IsMember({"natural", "prefill_scalar", "prefill_vec8"}))
      ->capture_default_str();
  replay->add_option("--json", replay_json, "also write the report as JSON to this file");
  replay->add_flag("--dry-run", replay_dry_run, "check the manifest and print the plan (routes, calls, device memory); no GPU needed");

  CLI11_PARSE(app, argc, argv);
  try {
    if (*verify) {
      if (list_families) {
        for (const auto& f : nvfp4::all_families()) std::cout << f.name << ": " << f.aim << "\n";
        return 0;
      }
      for (const auto& name : vo.families) {
        if (!nvfp4::find_family(name)) throw std::invalid_argument("--family " + name + ": unknown (see verify --list)");
      }
      if (!vo.device_coverage.empty() && !nvh::probe::enabled()) {
        throw std::invalid_argument("--device-coverage: this build has no branch probes (configure with "
                                    "-DNVFP4_DEVICE_PROBES=ON, e.g. the cuda-probes preset)");
      }
      auto be = backend_named(backend);
      return nvfp4::run_verify(*be, vo, std::cout);
    }
    if (app.got_subcommand("primitives")) return cmd_primitives();
    if (app.got_subcommand("routes")) return cmd_routes();
    if (*hash) return cmd_hash(backend, list, out, argv[0]);
    if (*cmp) return cmd_compare(a, b);
    if (*bench) return cmd_bench(bo);
    if (*gate) return cmd_gate(logs, backend);
    if (*replay) return cmd_replay(replay_manifest, ro, replay_route, replay_json, replay_dry_run);
  } catch (const std::exception& e) {
    std::cerr << "nvfp4-harness: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
