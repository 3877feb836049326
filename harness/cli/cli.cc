// nvfp4-harness: the command line. This file is the composition root: the
// one place in harness/ that names the NVFP4 operator, wiring its case
// families, manifests and benchmarks to the operator-agnostic machinery.
#include "harness/cli/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
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
#include "harness/safetensors.h"
#include "harness/shard.h"
#include "kernels/dispatch.h"
#include "kernels/nvfp4_matmul.h"
#include "properties/case_lists.h"
#include "properties/families.h"
#include "properties/matmul_case.h"
#include "properties/route_coverage.h"
#include "properties/tensor_file.h"
#include "properties/verify_job.h"
#include "reference/toolkit_crosscheck.h"

namespace nvfp4 {
namespace {

const std::vector<std::string> kBackends = {"best", "host", "cuda"};

// "best" is the GPU when one can be used, else the host executor.
std::unique_ptr<nvh::Backend> backend_named(const std::string& name) {
  if (name == "host") return nvh::make_host_backend();
  if (name == "cuda") return nvh::make_cuda_backend();
  return nvh::make_best_backend();
}

// ---------------------------------------------------------------------------
// Validators beyond CLI11's own. CLI11 puts the option's name in front of the
// message ("--cases: abc is not a whole number").

// Digits, with a leading '-' when negatives may be written: CLI11's Range
// would call "abc" and "1.5" merely out of range.
bool is_whole_number(const std::string& text, bool allow_minus) {
  const std::size_t first = allow_minus && !text.empty() && text[0] == '-' ? 1 : 0;
  if (text.size() == first) return false;
  for (std::size_t i = first; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return true;
}

const CLI::Validator kWholeNumber(
    [](std::string& text) {
      return is_whole_number(text, true) ? "" : text + " is not a whole number";
    },
    "INT");

// A 64-bit seed. CLI11 reads "-1" into an unsigned option as 2^64 - 1 and
// 2^64 as 2^64 - 1, silently (and so does its Range), so this checks both.
const CLI::Validator kSeed(
    [](std::string& text) {
      if (is_whole_number(text, true) && text[0] == '-')
        return text + " is negative: must be 0 or more";
      if (!is_whole_number(text, false)) return text + " is not a whole number";
      uint64_t value = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error == std::errc::result_out_of_range) {
        return text + " is out of range: must be at most " +
               std::to_string(std::numeric_limits<uint64_t>::max());
      }
      return std::string();
    },
    "UINT64");

// "i/n" for --shard; CLI11 puts "--shard: " in front, so parse_shard's own is cut off.
const CLI::Validator kShard(
    [](std::string& text) {
      try {
        nvh::parse_shard(text, "--shard");
      } catch (const std::invalid_argument& e) {
        return std::string(e.what()).substr(std::strlen("--shard: "));
      }
      return std::string();
    },
    "INDEX/COUNT");

// A --case key, checked before any work starts (CLI11 puts "--case: " in front).
const CLI::Validator kCaseKey(
    [](std::string& text) {
      try {
        nvfp4::check_case_key(text);
      } catch (const std::invalid_argument& e) {
        return std::string(e.what());
      }
      return std::string();
    },
    "FAMILY/CASE");

const CLI::Validator kNotEmpty(
    [](std::string& text) { return text.empty() ? "the value is empty (\"\")" : ""; }, "NONEMPTY");

// A file to write: named, and in a folder that exists (checked before the
// work, not after it).
const CLI::Validator kFileToWrite(
    [](std::string& text) {
      if (text.empty()) return std::string("the value is empty (\"\")");
      const std::filesystem::path folder = std::filesystem::path(text).parent_path();
      std::error_code ignored;
      if (!folder.empty() && !std::filesystem::is_directory(folder, ignored)) {
        return text + ": the folder " + folder.string() + " does not exist";
      }
      if (std::filesystem::is_directory(text, ignored)) return text + " is a folder, not a file";
      return std::string();
    },
    "FILE");

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// ---------------------------------------------------------------------------
// The commands.

int cmd_primitives(std::ostream& out) {
  const auto report = nvfp4::ref::check_primitives();
  out << report.to_text();
  out << (report.total_mismatches() ? "FAIL" : "OK") << ": " << report.total_mismatches()
      << " mismatches\n";
  return report.total_mismatches() ? 1 : 0;
}

int cmd_routes(std::ostream& out) {
  out << nvfp4::route_table_text();
  return 0;
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
    nvfp4::Caps sm90;  // as the H200 would decide
    sm90.sm = 90;
    sm90.backend = "dry run";
    out << nvfp4::render_replay_plan(m, nvfp4::plan_replay(m, options, sm90));
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

int cmd_gate(const std::vector<std::string>& logs, const std::string& backend_name,
             std::ostream& out) {
  auto backend = backend_named(backend_name);
  const auto records = nvh::read_route_logs(logs);
  const nvh::GateReport report =
      nvh::evaluate_gate(nvfp4::gate_declaration(), nvfp4::hardware_gates(*backend), records);
  out << records.size() << " launch records from " << logs.size()
      << " path(s); hardware gates as on " << backend->name() << " (" << backend->arch() << ")\n\n"
      << nvh::render_gate_text(report);
  return report.passed() ? 0 : 1;
}

// Two manifests agree only when they share a case and differ in none.
int cmd_compare(const std::string& a, const std::string& b, std::ostream& out) {
  const nvh::ManifestDiff diff = nvh::compare(nvh::read_manifest(a), nvh::read_manifest(b));
  out << nvh::render_diff(diff, a, b);
  return diff.agree() ? 0 : 1;
}

// GoogleTest's sharding protocol: --shard wins over GTEST_TOTAL_SHARDS and
// GTEST_SHARD_INDEX; GTEST_SHARD_STATUS_FILE is touched to say they are honoured.
nvh::Shard shard_chosen(const std::string& option) {
  const nvh::Shard shard = nvh::choose_shard(option, std::getenv("GTEST_TOTAL_SHARDS"),
                                             std::getenv("GTEST_SHARD_INDEX"));
  if (const char* status = std::getenv("GTEST_SHARD_STATUS_FILE"))
    nvh::touch_shard_status_file(status);
  return shard;
}

int cmd_merge(const nvfp4::MergeOptions& mo, std::ostream& out) {
  return nvfp4::run_merge(mo, out);
}

int cmd_verify(const std::string& backend, const nvfp4::VerifyOptions& vo, bool list_families,
               std::ostream& out) {
  if (list_families) {
    for (const auto& f : nvfp4::all_families()) out << f.name << ": " << f.aim << "\n";
    return 0;
  }
  if (!vo.device_coverage.empty() && !nvh::probe::enabled()) {
    throw std::invalid_argument(
        "verify: --device-coverage " + vo.device_coverage +
        ": this build has no branch probes (configure with -DNVFP4_DEVICE_PROBES=ON, "
        "e.g. the cuda-probes preset)");
  }
  // Each worker process makes its own backend (a CUDA context does not survive fork).
  return nvfp4::run_verify([backend] { return backend_named(backend); }, vo, out);
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

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const auto& f : nvfp4::all_families()) names.push_back(f.name);
  return names;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            const CliHooks& hooks) {
  CLI::App app{
      "nvfp4-harness: proves every dispatch route of the NVFP4 matmul is reached and computes the "
      "right bits"};
  app.require_subcommand(1);
  std::string backend = "best";

  auto* verify =
      app.add_subcommand("verify",
                         "the main job: primitives, every case family, the model prefill, the "
                         "golden manifest, the route gate");
  nvfp4::VerifyOptions vo;
  vo.before_case = hooks.before_case;
  std::vector<CLI::Option*> run_options;  // what --list excludes
  run_options.push_back(
      verify->add_option("--backend", backend, "best (the GPU if usable, else host), host or cuda")
          ->check(CLI::IsMember(kBackends)));
  run_options.push_back(
      verify
          ->add_option("--family", vo.families,
                       "run only these families (repeatable); the route gate is then shown but "
                       "not judged, and the exit code reflects the cases only")
          ->check(CLI::IsMember(family_names())));
  run_options.push_back(
      verify
          ->add_option("--cases", vo.random_cases,
                       "random cases per family (default: 25 on the host, 200 on a GPU); 0 runs "
                       "the boundary examples only, without judging the families' route targets")
          ->check(kWholeNumber)
          ->check(CLI::Range(0, 100000)));
  run_options.push_back(
      verify->add_option("--seed", vo.seed, "seed of the random cases (0 to 2^64 - 1)")
          ->check(kSeed));
  run_options.push_back(
      verify->add_option("--out", vo.out_dir, "folder for routes.jsonl, manifest.json, junit.xml")
          ->check(kNotEmpty)
          ->capture_default_str());
  bool no_fork = false;
  run_options.push_back(
      verify->add_flag("--no-fork", no_fork,
                       "run the cases in this process, e.g. under a debugger (by default each runs "
                       "in a worker process, so a case that crashes with a signal is a FAIL and "
                       "the run goes on; in process a crash ends the run)"));
  auto* coverage =
      verify
          ->add_option(
              "--device-coverage", vo.device_coverage,
              "write this run's kernel branch probe counts (GPU, or host executor) as an lcov "
              "tracefile (its folder is made, as --out's is); needs a probe build "
              "(NVFP4_DEVICE_PROBES, preset cuda-probes)")
          ->check(kNotEmpty);
  run_options.push_back(coverage);
  run_options.push_back(
      verify
          ->add_option("--source-root", vo.source_root,
                       "source tree the tracefile's paths point into (default: the one this was "
                       "built from)")
          ->check(CLI::ExistingDirectory)
          ->needs(coverage));
  std::vector<std::string> skipped_levels;
  run_options.push_back(
      verify
          ->add_option("--skip", skipped_levels,
                       "leave out a level (repeatable): primitives (level 1), model (level 3) "
                       "or golden (level 4); the operator's cases (level 2) always run")
          ->check(CLI::IsMember({"primitives", "model", "golden"})));
  CLI::Option* family_option = verify->get_option("--family");
  run_options.push_back(
      verify
          ->add_option("--case", vo.cases,
                       "rerun only these cases (repeatable, or a comma list), each named as "
                       "manifest.json keys it: FAMILY/CASE, golden/CASE, or model/LABEL; the "
                       "name carries the case's seed and every field, so --seed does not change "
                       "it; prints each case's outcome and digest; the gate is not judged")
          ->delimiter(',')
          ->check(kCaseKey)
          ->excludes(family_option));
  std::string shard_option;
  run_options.push_back(
      verify
          ->add_option("--shard", shard_option,
                       "run shard INDEX of COUNT: task i of the run's list (levels 2 to 4 in "
                       "order) when i % COUNT == INDEX, level 1 in shard 0; wins over "
                       "GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX; the gate is judged by `merge`")
          ->check(kShard));
  bool list_families = false;
  auto* list = verify->add_flag("--list", list_families, "list the families and exit");
  for (CLI::Option* o : run_options) list->excludes(o);

  auto* merge =
      app.add_subcommand("merge",
                         "combine the --out folders of a verify run's shards (route logs, "
                         "manifests, JUnit) and judge the gate over the whole");
  nvfp4::MergeOptions mo;
  merge
      ->add_option("--out", mo.out_dir,
                   "folder for the merged routes.jsonl, manifest.json, junit.xml")
      ->check(kNotEmpty)
      ->capture_default_str();
  merge->add_option("SHARD_DIRS", mo.shard_dirs, "every shard's verify --out folder")
      ->required()
      ->check(CLI::ExistingDirectory);

  app.add_subcommand("primitives",
                     "level 1 alone: the NVFP4 codecs against the CUDA toolkit's conversions");
  app.add_subcommand("routes", "the routes and the reasons the dispatcher may take each for");

  auto* hash = app.add_subcommand(
      "hash", "write a hash manifest {case name -> SHA-256 of Y} for a named case list");
  std::string case_list = "seed8", hash_out;
  hash->add_option("--backend", backend, "best, host or cuda")->check(CLI::IsMember(kBackends));
  hash->add_option("--cases", case_list, "case list")
      ->check(CLI::IsMember(nvfp4::list_names()))
      ->capture_default_str();
  hash->add_option("--out", hash_out, "manifest file to write")->required()->check(kFileToWrite);

  auto* cmp =
      app.add_subcommand("compare",
                         "report the cases whose digests differ between two manifests; fails "
                         "unless they share a case and differ in none");
  std::string a, b;
  cmp->add_option("A", a, "first manifest")->required()->check(CLI::ExistingFile);
  cmp->add_option("B", b, "second manifest")->required()->check(CLI::ExistingFile);

  auto* gate = app.add_subcommand(
      "gate", "the route-coverage gate over route logs (JSON lines) written by test runs");
  std::vector<std::string> logs;
  gate->add_option("LOGS", logs, "route log files, or folders of *.jsonl")
      ->required()
      ->check(CLI::ExistingPath);
  gate->add_option("--backend", backend, "whose hardware gates apply: best, host or cuda")
      ->check(CLI::IsMember(kBackends));

  auto* bench = app.add_subcommand(
      "bench",
      "time every route at the seed's and the decode shapes against the copy ceiling (GPU)");
  nvfp4::BenchOptions bo;
  bench->add_option("--group", bo.groups,
                    "prefill, sweep, decode or msweep (repeatable; default all)")
      ->check(CLI::IsMember({"prefill", "sweep", "decode", "msweep"}));
  bench->add_option("--reps", bo.reps, "timed launches per case (median taken)")
      ->check(kWholeNumber)
      ->check(CLI::Range(100, 100000))
      ->capture_default_str();
  bench->add_option("--warmup", bo.warmup, "untimed launches first")
      ->check(kWholeNumber)
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  bench->add_option("--m", bo.msweep_m, "the M values of group msweep (repeatable; default 9 to 8192)")
      ->check(kWholeNumber)
      ->check(CLI::Range(1, 1 << 20));
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
      ->add_option("MANIFEST", replay_manifest,
                   "model manifest (JSON), e.g. bench/manifests/qwen_like_prefill.json")
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
                   "natural (the dispatcher decides), or force prefill_scalar or prefill_vec8")
      ->check(CLI::IsMember({"natural", "prefill_scalar", "prefill_vec8"}))
      ->capture_default_str();
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
      ->check(CLI::IsMember(kBackends));

  // CLI11 reports an unknown command as "A subcommand is required", not naming it.
  if (args.size() > 1 && !args[1].empty() && args[1][0] != '-') {
    std::vector<std::string> commands;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      commands.push_back(sub->get_name());
    }
    if (std::find(commands.begin(), commands.end(), args[1]) == commands.end()) {
      return app.exit(CLI::ExtrasError("unknown command \"" + args[1] +
                                           "\"; the commands are: " + joined(commands),
                                       static_cast<int>(CLI::ExitCodes::ExtrasError)),
                      out, err);
    }
  }

  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e, out, err);
  }
  vo.isolate = !no_fork;

  try {
    if (*verify) {
      for (const std::string& level : skipped_levels) {
        if (level == "primitives") vo.primitives = false;
        if (level == "model") vo.model = false;
        if (level == "golden") vo.golden = false;
      }
      if (!list_families) vo.shard = shard_chosen(shard_option);
      return cmd_verify(backend, vo, list_families, out);
    }
    if (*merge) return cmd_merge(mo, out);
    if (*run) return cmd_run(backend, run_inputs, run_route, run_y, out);
    if (app.got_subcommand("primitives")) return cmd_primitives(out);
    if (app.got_subcommand("routes")) return cmd_routes(out);
    if (*hash)
      return cmd_hash(backend, case_list, hash_out, args.empty() ? "nvfp4-harness" : args[0], out);
    if (*cmp) return cmd_compare(a, b, out);
    if (*bench) return cmd_bench(bo, out, err);
    if (*gate) return cmd_gate(logs, backend, out);
    if (*replay)
      return cmd_replay(replay_manifest, ro, replay_route, replay_json, replay_dry_run, out, err);
  } catch (const std::exception& e) {
    err << "nvfp4-harness: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

}  // namespace nvfp4
