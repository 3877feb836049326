// nvfp4-harness: the command line. This is the composition root: it puts the
// NVFP4 operator's suite (properties/nvfp4_matmul/suite.h) under the harness's
// command line (harness/suite_cli.h: verify, merge, gate, routes, compare) and
// adds the operator's own commands (primitives, hash, bench, replay, run).
#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/nvfp4_matmul/bench_job.h"
#include "bench/nvfp4_matmul/replay.h"
#include "harness/backend.h"
#include "harness/manifest.h"
#include "harness/progress.h"
#include "harness/safetensors.h"
#include "harness/suite_cli.h"
#include "kernels/nvfp4_matmul/dispatch.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "properties/nvfp4_matmul/case_lists.h"
#include "properties/nvfp4_matmul/matmul_case.h"
#include "properties/nvfp4_matmul/suite.h"
#include "properties/nvfp4_matmul/tensor_file.h"
#include "reference/nvfp4_matmul/toolkit_crosscheck.h"

namespace nvfp4 {
namespace {

using nvh::backend_choices;
using nvh::backend_named;
using nvh::kFileToWrite;
using nvh::kNotEmpty;
using nvh::kWholeNumber;

int cmd_primitives(std::ostream& out) {
  const auto report = nvfp4::ref::check_primitives();
  out << report.to_text();
  out << (report.total_mismatches() ? "FAIL" : "OK") << ": " << report.total_mismatches()
      << " mismatches\n";
  return report.total_mismatches() ? 1 : 0;
}

int cmd_hash(const std::string& backend_name, const std::string& list, const std::string& path,
             const std::string& argv0, std::ostream& out) {
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
  nvh::write_manifest(m, path);
  out << "wrote " << cases.size() << " digests from " << m.backend << " (" << m.arch << ") to "
      << path << "\n";
  return 0;
}

int cmd_bench(const nvfp4::BenchOptions& o, std::ostream& out, std::ostream& err) {
  auto backend = nvh::make_cuda_backend();
  const nvfp4::BenchReport report = nvfp4::run_bench(*backend, o, err);
  out << nvfp4::render_bench_table(report);
  std::filesystem::path json(o.json_path);
  if (json.has_parent_path()) std::filesystem::create_directories(json.parent_path());
  std::ofstream(o.json_path) << nvfp4::render_bench_json(report);
  out << "wrote " << o.json_path << "\n";
  return 0;
}

// The manifest is read and planned before any GPU is asked for, so a bad
// manifest fails the same way everywhere; --dry-run stops there.
int cmd_replay(const std::string& path, const nvfp4::ReplayOptions& o, const std::string& route,
               const std::string& json_path, bool dry_run, std::ostream& out, std::ostream& err) {
  nvfp4::ReplayOptions options = o;
  options.route = *nvfp4::parse_replay_route(route);
  const nvfp4::ReplayManifest m = nvfp4::read_replay_manifest(path);
  if (dry_run) {
    // As the H200 decides, wgmma included: without it the plan has no
    // prefill_fused above M = 64 and names prefill_vec8 where the H200 runs
    // the fused route.
    out << nvfp4::render_replay_plan(m,
                                     nvfp4::plan_replay(m, options, nvfp4::h200_caps("dry run")));
    return 0;
  }
  std::unique_ptr<nvh::Backend> backend;
  try {
    backend = nvh::make_cuda_backend();
  } catch (const nvh::BackendUnavailable& e) {
    throw nvh::BackendUnavailable(
        std::string("replay: a replay times a GPU: ") + e.what() +
        " (--dry-run checks the manifest and prints the plan without one)");
  }
  const nvfp4::ReplayReport report = nvfp4::run_replay(*backend, m, options, err);
  out << nvfp4::render_replay_table(report);
  if (!json_path.empty()) {
    std::filesystem::path json(json_path);
    if (json.has_parent_path()) std::filesystem::create_directories(json.parent_path());
    std::ofstream(json_path) << nvfp4::render_replay_json(report);
    out << "wrote " << json_path << "\n";
  }
  return 0;
}

// Your own tensors: every route that accepts them (or one), each checked
// against the reference; exit 1 when one fails or none ran.
int cmd_run(const std::string& backend_name, const std::string& inputs, const std::string& route,
            const std::string& y_path, std::ostream& out) {
  auto backend = backend_named(backend_name);
  const nvfp4::TensorCase c = nvfp4::read_tensor_case(inputs);
  const std::optional<nvfp4::Route> only = route.empty() ? std::nullopt : nvfp4::parse_route(route);
  const nvfp4::TensorRunReport report = nvfp4::run_tensor_case(*backend, c, only);
  out << "nvfp4-harness run on " << backend->name() << " (" << backend->arch() << "): " << inputs
      << "\n"
      << nvfp4::render_tensor_run(c, report);
  if (!y_path.empty()) {
    const nvh::SafeTensorsFile y = nvfp4::outputs_file(c, report, only.has_value());
    if (y.tensors.empty()) {
      out << "no route ran: nothing written to " << y_path << "\n";
    } else {
      nvh::write_safetensors(y, y_path);
      out << "wrote Y of " << y.tensors.size() << " route(s) to " << y_path << "\n";
    }
  }
  if (!report.failed()) return 0;
  const bool any_failed =
      std::any_of(report.runs.begin(), report.runs.end(),
                  [](const nvfp4::RouteRun& r) { return r.outcome == nvfp4::Outcome::fail; });
  out << (any_failed ? "FAIL: a route gave a wrong answer\n"
                     : "FAIL: no route ran, so nothing was checked\n");
  return 1;
}

std::vector<std::string> route_names() {
  std::vector<std::string> names;
  for (nvfp4::Route r : nvfp4::kAllRoutes) names.push_back(nvfp4::route_name(r));
  return names;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const CliHooks& hooks) {
  CLI::App app{
      "nvfp4-harness: proves every dispatch route of the NVFP4 matmul is reached and computes the "
      "right bits"};
  app.require_subcommand(1);
  nvh::SuiteCommands common(app, nvfp4_suite(), {hooks.before_case});
  std::string backend = "best";

  app.add_subcommand("primitives",
                     "the self checks alone: the NVFP4 codecs against the CUDA toolkit's "
                     "conversions");

  auto* hash = app.add_subcommand(
      "hash", "write a hash manifest {case name -> SHA-256 of Y} for a named case list");
  std::string case_list = "seed8", hash_out;
  hash->add_option("--backend", backend, "best, host or cuda")
      ->check(CLI::IsMember(backend_choices()));
  hash->add_option("--cases", case_list, "case list")
      ->check(CLI::IsMember(nvfp4::list_names()))
      ->capture_default_str();
  hash->add_option("--out", hash_out, "manifest file to write")->required()->check(kFileToWrite);

  auto* bench = app.add_subcommand(
      "bench",
      "time every route at the seed's and the decode shapes against the copy ceiling (GPU)");
  nvfp4::BenchOptions bo;
  bench
      ->add_option("--group", bo.groups,
                   "prefill, sweep, decode, msweep, depth or tma (repeatable; default all "
                   "but depth and tma)")
      ->check(CLI::IsMember({"prefill", "sweep", "decode", "msweep", "depth", "tma"}));
  bench->add_option("--reps", bo.reps, "timed launches per case (median taken)")
      ->check(kWholeNumber)
      ->check(CLI::Range(100, 100000))
      ->capture_default_str();
  bench->add_option("--warmup", bo.warmup, "untimed launches first")
      ->check(kWholeNumber)
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  bench
      ->add_option("--m", bo.msweep_m,
                   "the M values of group msweep (repeatable; default 9 to 8192)")
      ->check(kWholeNumber)
      ->check(CLI::Range(1, 1 << 20));
  std::vector<std::string> msweep_shapes;
  bench
      ->add_option("--shape", msweep_shapes,
                   "the weight shapes NxK of group msweep (repeatable; default 4096x4096, "
                   "14336x4096 and 4096x14336)")
      ->check(CLI::Validator(
          [](std::string& text) {
            try {
              nvfp4::parse_weight_shape(text);
              return std::string();
            } catch (const std::invalid_argument& e) {
              return std::string(e.what());
            }
          },
          "NxK"));
  bench
      ->add_option("--only", bo.only,
                   "time only the cases whose name contains this text (repeatable), e.g. to "
                   "profile one case")
      ->check(kNotEmpty);
  bench->add_option("--json", bo.json_path, "where to write the JSON report")
      ->check(kNotEmpty)
      ->capture_default_str();
  bench
      ->add_option("--global-scale", bo.global_scale,
                   "weight_scale_2 of every input set (a power of two takes the GEMVs' fast path; "
                   "e.g. 0.3 times "
                   "their contract path)")
      ->capture_default_str();

  auto* replay = app.add_subcommand("replay",
                                    "replay a model's matmuls for a prompt in prefill chunks; GPU "
                                    "time in dequant, GEMM and bias per route (GPU)");
  std::string replay_manifest, replay_route = "natural", replay_json;
  nvfp4::ReplayOptions ro;
  bool replay_dry_run = false;
  replay
      ->add_option(
          "MANIFEST", replay_manifest,
          "model manifest (JSON), e.g. bench/nvfp4_matmul/manifests/qwen_like_prefill.json")
      ->required()
      ->check(CLI::ExistingFile);
  replay->add_option("--prompt", ro.prompt, "prompt tokens")
      ->check(kWholeNumber)
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  replay
      ->add_option("--chunk", ro.chunk,
                   "tokens per prefill chunk (M of every call; the last chunk may be shorter)")
      ->check(kWholeNumber)
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  replay
      ->add_option("--route", replay_route,
                   "natural (the dispatcher decides), or force prefill_scalar, prefill_vec8 or "
                   "prefill_fused")
      ->check(CLI::IsMember({"natural", "prefill_scalar", "prefill_vec8", "prefill_fused"}))
      ->capture_default_str();
  replay->add_flag("!--no-prepack", ro.prepack,
                   "read the weights in the contract's order only; by default each is also "
                   "prepacked once for prefill_fused's wgmma kernel, which reads that copy (twice "
                   "the codes' device memory; the one-time GPU time is reported apart)");
  auto* dry_run = replay->add_flag(
      "--dry-run", replay_dry_run,
      "check the manifest and print the plan (routes, calls, device memory); no GPU needed");
  replay
      ->add_option("--json", replay_json,
                   "also write the report as JSON to this file (not with --dry-run)")
      ->check(kNotEmpty)
      ->excludes(dry_run);

  auto* run = app.add_subcommand("run",
                                 "run the operator on your own tensors (a safetensors file: A, B, "
                                 "weight_scale, weight_scale_2, optional "
                                 "bias; README.md, \"Your own tensors\") on every route that "
                                 "accepts them, each checked against the "
                                 "reference");
  std::string run_inputs, run_route, run_y;
  run->add_option("--inputs", run_inputs, "the safetensors file")
      ->required()
      ->check(CLI::ExistingFile);
  run->add_option("--route", run_route, "run only this route")->check(CLI::IsMember(route_names()));
  run->add_option(
         "--out", run_y,
         "write Y to this safetensors file: \"Y.<route>\" for each route that ran, or \"Y\" "
         "with --route")
      ->check(kFileToWrite);
  run->add_option("--backend", backend, "best (the GPU if usable, else host), host or cuda")
      ->check(CLI::IsMember(backend_choices()));

  return nvh::run_app(app, "nvfp4-harness", args, out, err, [&]() -> int {
    if (const std::optional<int> rc = common.run(out)) return *rc;
    if (*run) return cmd_run(backend, run_inputs, run_route, run_y, out);
    if (app.got_subcommand("primitives")) return cmd_primitives(out);
    if (*hash)
      return cmd_hash(backend, case_list, hash_out, args.empty() ? "nvfp4-harness" : args[0], out);
    if (*bench) {
      for (const std::string& text : msweep_shapes) {
        bo.msweep_shapes.push_back(nvfp4::parse_weight_shape(text));
      }
      return cmd_bench(bo, out, err);
    }
    if (*replay)
      return cmd_replay(replay_manifest, ro, replay_route, replay_json, replay_dry_run, out, err);
    return 0;
  });
}

}  // namespace nvfp4
