#include "harness/suite_cli.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

#include "harness/manifest.h"
#include "harness/probe.h"
#include "harness/route_gate.h"
#include "harness/route_record.h"
#include "harness/shard.h"

namespace nvh {
namespace {

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

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// "i/n" for --shard; CLI11 puts "--shard: " in front, so parse_shard's own is cut off.
const CLI::Validator kShard(
    [](std::string& text) {
      try {
        parse_shard(text, "--shard");
      } catch (const std::invalid_argument& e) {
        return std::string(e.what()).substr(std::strlen("--shard: "));
      }
      return std::string();
    },
    "INDEX/COUNT");

// A --case key, checked before any work starts (CLI11 puts "--case: " in front).
CLI::Validator case_key_of(const OperatorSuite& suite) {
  return CLI::Validator(
      [&suite](std::string& text) {
        try {
          check_case_key(suite, text);
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
        return std::string();
      },
      "GROUP/CASE");
}

// GoogleTest's sharding protocol: --shard wins over GTEST_TOTAL_SHARDS and
// GTEST_SHARD_INDEX; GTEST_SHARD_STATUS_FILE is touched to say they are honoured.
Shard shard_chosen(const std::string& option) {
  const Shard shard =
      choose_shard(option, std::getenv("GTEST_TOTAL_SHARDS"), std::getenv("GTEST_SHARD_INDEX"));
  if (const char* status = std::getenv("GTEST_SHARD_STATUS_FILE")) touch_shard_status_file(status);
  return shard;
}

}  // namespace

const std::vector<std::string>& backend_choices() {
  static const std::vector<std::string> choices = {"best", "host", "cuda"};
  return choices;
}

std::unique_ptr<Backend> backend_named(const std::string& name) {
  if (name == "host") return make_host_backend();
  if (name == "cuda") return make_cuda_backend();
  return make_best_backend();
}

const CLI::Validator kWholeNumber(
    [](std::string& text) {
      return is_whole_number(text, true) ? "" : text + " is not a whole number";
    },
    "INT");

// CLI11 reads "-1" into an unsigned option as 2^64 - 1 and 2^64 as 2^64 - 1,
// silently (and so does its Range), so this checks both.
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

const CLI::Validator kNotEmpty(
    [](std::string& text) { return text.empty() ? "the value is empty (\"\")" : ""; }, "NONEMPTY");

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

SuiteCommands::SuiteCommands(CLI::App& app, const OperatorSuite& suite, SuiteCliHooks hooks)
    : suite_(suite), hooks_(std::move(hooks)) {
  const std::vector<std::string> skippable = suite.skippable();
  verify_ = app.add_subcommand(
      "verify", "the main job: " + suite.name() + "'s self checks, every case family" +
                    (skippable.empty() ? "" : " and its other groups") + ", then the route gate");
  VerifyOptions& vo = verify_options_;
  vo.before_case = hooks_.before_case;
  std::vector<CLI::Option*> run_options;  // what --list excludes
  run_options.push_back(
      verify_
          ->add_option("--backend", backend_, "best (the GPU if usable, else host), host or cuda")
          ->check(CLI::IsMember(backend_choices())));
  run_options.push_back(
      verify_
          ->add_option("--family", vo.families,
                       "run only these families (repeatable); the route gate is then shown but "
                       "not judged, and the exit code reflects the cases only")
          ->check(CLI::IsMember(suite.family_names())));
  run_options.push_back(
      verify_
          ->add_option("--cases", vo.random_cases,
                       "random cases per family (default: 25 on the host, 200 on a GPU); 0 runs "
                       "the boundary examples only, without judging the families' route targets")
          ->check(kWholeNumber)
          ->check(CLI::Range(0, 100000)));
  run_options.push_back(
      verify_->add_option("--seed", vo.seed, "seed of the random cases (0 to 2^64 - 1)")
          ->check(kSeed));
  run_options.push_back(
      verify_->add_option("--out", vo.out_dir, "folder for routes.jsonl, manifest.json, junit.xml")
          ->check(kNotEmpty)
          ->capture_default_str());
  run_options.push_back(verify_->add_flag(
      "--no-fork", no_fork_,
      "run the cases in this process, e.g. under a debugger (by default each runs in a worker "
      "process, so a case that crashes with a signal is a FAIL and the run goes on; in process a "
      "crash ends the run)"));
  auto* coverage =
      verify_
          ->add_option(
              "--device-coverage", vo.device_coverage,
              "write this run's kernel branch probe counts (GPU, or host executor) as an lcov "
              "tracefile (its folder is made, as --out's is); needs a probe build "
              "(NVFP4_DEVICE_PROBES, preset cuda-probes)")
          ->check(kNotEmpty);
  run_options.push_back(coverage);
  run_options.push_back(
      verify_
          ->add_option("--source-root", vo.source_root,
                       "source tree the tracefile's paths point into (default: the one this was "
                       "built from)")
          ->check(CLI::ExistingDirectory)
          ->needs(coverage));
  if (!skippable.empty()) {
    run_options.push_back(verify_
                              ->add_option("--skip", vo.skip,
                                           "leave out a group (repeatable): " + joined(skippable) +
                                               "; the families always run")
                              ->check(CLI::IsMember(skippable)));
  }
  CLI::Option* family_option = verify_->get_option("--family");
  run_options.push_back(
      verify_
          ->add_option("--case", vo.cases,
                       "rerun only these cases (repeatable, or a comma list), each named as "
                       "manifest.json keys it: GROUP/CASE (a family or another group); the name "
                       "carries the case's seed and every field, so --seed does not change it; "
                       "prints each case's outcome and digest; the gate is not judged")
          ->delimiter(',')
          ->check(case_key_of(suite))
          ->excludes(family_option));
  run_options.push_back(
      verify_
          ->add_option("--shard", shard_,
                       "run shard INDEX of COUNT: task i of the run's list (every case in order) "
                       "when i % COUNT == INDEX, the self checks in shard 0; wins over "
                       "GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX; the gate is judged by `merge`")
          ->check(kShard));
  auto* list = verify_->add_flag("--list", list_families_, "list the families and exit");
  for (CLI::Option* o : run_options) list->excludes(o);

  merge_ = app.add_subcommand("merge",
                              "combine the --out folders of a verify run's shards (route logs, "
                              "manifests, JUnit) and judge the gate over the whole");
  merge_
      ->add_option("--out", merge_options_.out_dir,
                   "folder for the merged routes.jsonl, manifest.json, junit.xml")
      ->check(kNotEmpty)
      ->capture_default_str();
  merge_->add_option("SHARD_DIRS", merge_options_.shard_dirs, "every shard's verify --out folder")
      ->required()
      ->check(CLI::ExistingDirectory);

  routes_ =
      app.add_subcommand("routes", "the routes and the reasons the dispatcher may take each for");

  compare_ = app.add_subcommand("compare",
                                "report the cases whose digests differ between two manifests; "
                                "fails unless they share a case and differ in none");
  compare_->add_option("A", manifest_a_, "first manifest")->required()->check(CLI::ExistingFile);
  compare_->add_option("B", manifest_b_, "second manifest")->required()->check(CLI::ExistingFile);

  gate_ = app.add_subcommand(
      "gate", "the route-coverage gate over route logs (JSON lines) written by test runs");
  gate_->add_option("LOGS", logs_, "route log files, or folders of *.jsonl")
      ->required()
      ->check(CLI::ExistingPath);
  gate_->add_option("--backend", backend_, "whose hardware gates apply: best, host or cuda")
      ->check(CLI::IsMember(backend_choices()));
}

std::optional<int> SuiteCommands::run(std::ostream& out) {
  if (*verify_) {
    if (list_families_) {
      for (const std::string& f : suite_.family_names())
        out << f << ": " << suite_.family_aim(f) << "\n";
      return 0;
    }
    VerifyOptions vo = verify_options_;
    vo.isolate = !no_fork_;
    vo.shard = shard_chosen(shard_);
    if (!vo.device_coverage.empty() && !probe::enabled()) {
      throw std::invalid_argument(
          "verify: --device-coverage " + vo.device_coverage +
          ": this build has no branch probes (configure with -DNVFP4_DEVICE_PROBES=ON, "
          "e.g. the cuda-probes preset)");
    }
    // Each worker process makes its own backend (a CUDA context does not survive fork).
    const std::string backend = backend_;
    return run_verify(
        suite_, [backend] { return backend_named(backend); }, vo, out);
  }
  if (*merge_) return run_merge(suite_, merge_options_, out);
  if (*routes_) {
    out << suite_.routes_text();
    return 0;
  }
  if (*compare_) {
    // Two manifests agree only when they share a case and differ in none.
    const ManifestDiff diff = compare(read_manifest(manifest_a_), read_manifest(manifest_b_));
    out << render_diff(diff, manifest_a_, manifest_b_);
    return diff.agree() ? 0 : 1;
  }
  if (*gate_) {
    auto backend = backend_named(backend_);
    const auto records = read_route_logs(logs_);
    const GateReport report =
        evaluate_gate(suite_.gate_declaration(), suite_.hardware_gates(*backend), records);
    out << records.size() << " launch records from " << logs_.size()
        << " path(s); hardware gates as on " << backend->name() << " (" << backend->arch()
        << ")\n\n"
        << render_gate_text(report);
    return report.passed() ? 0 : 1;
  }
  return std::nullopt;
}

int run_app(CLI::App& app, const std::string& tool, const std::vector<std::string>& args,
            std::ostream& out, std::ostream& err, const std::function<int()>& dispatch) {
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
  try {
    return dispatch();
  } catch (const std::exception& e) {
    err << tool << ": " << e.what() << "\n";
    return 2;
  }
}

int run_suite_cli(const OperatorSuite& suite, const std::vector<std::string>& args,
                  std::ostream& out, std::ostream& err, const SuiteCliHooks& hooks) {
  CLI::App app{suite.tool() + ": proves every dispatch route of " + suite.name() +
               " is reached and computes the right bits"};
  app.require_subcommand(1);
  SuiteCommands commands(app, suite, hooks);
  return run_app(app, suite.tool(), args, out, err, [&] { return commands.run(out).value_or(0); });
}

}  // namespace nvh
