#include "cli/cli.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "harness/manifest.h"
#include "harness/probe.h"
#include "harness/route_record.h"
#include "harness/safetensors.h"
#include "harness/sha256.h"
#include "properties/nvfp4_matmul/families.h"
#include "properties/nvfp4_matmul/matmul_case.h"
#include "properties/nvfp4_matmul/tensor_file.h"

namespace nvfp4 {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int rc = 0;
  std::string out, err;
};

CliRun cli(const std::vector<std::string>& args, const CliHooks& hooks = {}) {
  std::vector<std::string> argv = {"nvfp4-harness"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::ostringstream out, err;
  CliRun r;
  r.rc = run_cli(argv, out, err, hooks);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// A folder of its own for each test (ctest runs them in parallel), with the
// bad files the table below points at.
class CliFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    dir_ = fs::path(::testing::TempDir()) / ("nvfp4_cli_" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "a_folder");
    write("bad.json", "{");
    write("v0.json",
          R"({"format": "nvh.manifest.v0", "backend": "", "arch": "", "tool": "", "created_by": "",
                          "metadata": {}, "cases": {}})");
    nvh::write_manifest(nvh::Manifest{}, path("no_cases_1.json"));
    nvh::write_manifest(nvh::Manifest{}, path("no_cases_2.json"));
    nvh::Manifest one, other;
    one.add_case("case one", std::string(64, 'a'));
    other.add_case("case two", std::string(64, 'a'));
    nvh::write_manifest(one, path("one.json"));
    nvh::write_manifest(other, path("other.json"));
    write("bad.jsonl", "{\"op\": \"nvfp4_matmul\"}\n");
    write("bad_replay.json", R"({"nodes": []})");
    // run --inputs: a good file, and one wrong in each way the operator checks.
    const CaseSpec spec = make_case("adhoc", 2, 32, 128, 16, DType::fp16, true, /*exact=*/true);
    nvh::SafeTensorsFile good = tensor_file_of(spec, make_inputs(spec));
    nvh::write_safetensors(good, path("good.safetensors"));
    nvh::SafeTensorsFile f = good;
    f.tensors.erase("B");
    nvh::write_safetensors(f, path("no_b.safetensors"));
    f = good;
    f.tensors["A"].dtype = "F32";
    f.tensors["A"].shape = {1, 128};  // the same bytes
    nvh::write_safetensors(f, path("a_f32.safetensors"));
    f = good;
    f.tensors["weight_scale"].shape = {16, 16};  // the same bytes
    nvh::write_safetensors(f, path("scales_shape.safetensors"));
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // "$T" in an argument stands for this test's folder.
  std::vector<std::string> expand(std::vector<std::string> args) const {
    for (std::string& a : args) {
      for (std::size_t at; (at = a.find("$T")) != std::string::npos;)
        a.replace(at, 2, dir_.string());
    }
    return args;
  }

  fs::path dir_;
};

// One bad command line: what must fail, and the words that must say why,
// naming the bad value ("$T" is the test's folder).
struct BadInput {
  const char* name;
  std::vector<std::string> args;
  std::string message;  // must appear in stderr
};

std::ostream& operator<<(std::ostream& os, const BadInput& b) { return os << b.name; }

const BadInput kBadInputs[] = {
    // The issue's list.
    {"unknown_command_is_named_with_the_list",
     {"frobnicate"},
     "unknown command \"frobnicate\"; the commands are: verify, merge, routes, compare, gate, "
     "primitives, hash, bench, replay, run"},
    {"verify_seed_negative",
     {"verify", "--seed", "-1"},
     "--seed: -1 is negative: must be 0 or more"},
    {"verify_cases_not_a_number",
     {"verify", "--cases", "abc"},
     "--cases: abc is not a whole number"},
    {"verify_out_empty", {"verify", "--out", ""}, "--out: the value is empty (\"\")"},
    {"hash_out_empty", {"hash", "--out", ""}, "--out: the value is empty (\"\")"},
    // verify
    {"verify_backend_unknown",
     {"verify", "--backend", "tpu"},
     "--backend: tpu not in {best,host,cuda}"},
    {"verify_family_unknown",
     {"verify", "--family", "decode", "--family", "nosuch"},
     "--family: nosuch not in {decode,"},
    {"verify_cases_negative",
     {"verify", "--cases", "-1"},
     "--cases: Value -1 not in range 0 to 100000"},
    {"verify_cases_too_many",
     {"verify", "--cases", "100001"},
     "--cases: Value 100001 not in range 0 to 100000"},
    {"verify_cases_fraction", {"verify", "--cases", "1.5"}, "--cases: 1.5 is not a whole number"},
    {"verify_cases_hex", {"verify", "--cases", "0x10"}, "--cases: 0x10 is not a whole number"},
    {"verify_seed_not_a_number",
     {"verify", "--seed", "seven"},
     "--seed: seven is not a whole number"},
    {"verify_seed_past_64_bits",
     {"verify", "--seed", "18446744073709551616"},
     "--seed: 18446744073709551616 is out of range: must be at most 18446744073709551615"},
    {"verify_seed_largest_is_accepted_but_list_excludes_it",
     {"verify", "--seed", "18446744073709551615", "--list"},
     "--seed excludes --list"},
    {"verify_list_with_cases", {"verify", "--list", "--cases", "3"}, "--cases excludes --list"},
    {"verify_source_root_without_coverage",
     {"verify", "--source-root", "$T"},
     "--source-root requires --device-coverage"},
    {"verify_source_root_missing",
     {"verify", "--device-coverage", "$T/x.info", "--source-root", "$T/nowhere"},
     "--source-root: Directory does not exist: $T/nowhere"},
    {"verify_coverage_empty",
     {"verify", "--device-coverage", ""},
     "--device-coverage: the value is empty (\"\")"},
    {"verify_out_under_a_file",
     {"verify", "--out", "$T/bad.json/out"},
     "run_verify: out_dir = $T/bad.json/out: cannot create the folder: Not a directory"},
    {"verify_shard_index_past_count",
     {"verify", "--shard", "3/2"},
     "--shard: 3/2: the index 3 must be below the count 2"},
    {"verify_shard_index_negative",
     {"verify", "--shard", "-1/2"},
     "--shard: -1/2: the index -1 is not a whole number 0 or more"},
    {"verify_shard_index_not_a_number",
     {"verify", "--shard", "x/2"},
     "--shard: x/2: the index x is not a whole number 0 or more"},
    {"verify_shard_count_zero",
     {"verify", "--shard", "0/0"},
     "--shard: 0/0: the count must be 1 or more"},
    {"verify_shard_no_slash",
     {"verify", "--shard", "2"},
     "--shard: 2: not of the form INDEX/COUNT (e.g. 0/4)"},
    {"verify_case_unparsable",
     {"verify", "--case", "decode/fp16_M1"},
     "--case: parse_case_key: key = decode/fp16_M1: parse_case_name: name = fp16_M1: at \"\": "
     "expected \"_N\" (N)"},
    {"verify_case_without_family",
     {"verify", "--case", "fp16_M1_N17_K32_bs16_bias_s1"},
     "--case: check_case_key: key = fp16_M1_N17_K32_bs16_bias_s1: no '/': name the case as "
     "manifest.json keys it, GROUP/CASE"},
    {"verify_case_in_a_comma_list",
     {"verify", "--case", "decode/fp16_M1_N17_K32_bs16_bias_s1,decode/fp16_M1_N17_K32_bs16_s01"},
     "at \"01\": the seed: a leading 0 (name() writes none)"},
    {"verify_case_unknown_model_way",
     {"verify", "--case", "model/natural"},
     "--case: check_case_key: key = model/natural: the model has no way labelled \"natural\" (its "
     "ways: prefill, "},
    {"verify_case_with_family",
     {"verify", "--family", "decode", "--case", "decode/fp16_M1_N17_K32_bs16_bias_s1"},
     "--family excludes --case"},
    // merge
    {"merge_no_shards", {"merge"}, "SHARD_DIRS is required"},
    {"merge_missing_folder",
     {"merge", "$T/nowhere"},
     "SHARD_DIRS: Directory does not exist: $T/nowhere"},
    {"merge_not_a_verify_folder",
     {"merge", "--out", "$T/m", "$T/a_folder"},
     "run_merge: $T/a_folder/shard.json: cannot be read: not the --out folder of a verify run"},
    {"merge_out_empty", {"merge", "--out", "", "$T/a_folder"}, "--out: the value is empty (\"\")"},
    // primitives, routes
    {"primitives_unknown_option",
     {"primitives", "--fast"},
     "The following argument was not expected: --fast"},
    {"primitives_extra_argument",
     {"primitives", "all"},
     "The following argument was not expected: all"},
    {"routes_unknown_option",
     {"routes", "--backend", "host"},
     "The following arguments were not expected: host --backend"},
    // hash
    {"hash_out_missing", {"hash"}, "--out is required"},
    {"hash_unknown_case_list",
     {"hash", "--cases", "seed9", "--out", "$T/m.json"},
     "--cases: seed9 not in {seed8}"},
    {"hash_out_in_missing_folder",
     {"hash", "--out", "$T/nowhere/m.json"},
     "--out: $T/nowhere/m.json: the folder $T/nowhere does not exist"},
    {"hash_out_is_a_folder",
     {"hash", "--out", "$T/a_folder"},
     "--out: $T/a_folder is a folder, not a file"},
    {"hash_backend_unknown",
     {"hash", "--backend", "gpu", "--out", "$T/m.json"},
     "--backend: gpu not in {best,host,cuda}"},
    // compare
    {"compare_missing_file",
     {"compare", "$T/nowhere.json", "$T/one.json"},
     "A: File does not exist: $T/nowhere.json"},
    {"compare_one_manifest", {"compare", "$T/one.json"}, "B is required"},
    {"compare_a_folder",
     {"compare", "$T/one.json", "$T/a_folder"},
     "B: File is actually a directory: $T/a_folder"},
    {"compare_invalid_json",
     {"compare", "$T/bad.json", "$T/one.json"},
     "read_manifest: $T/bad.json: not valid JSON"},
    {"compare_wrong_format",
     {"compare", "$T/one.json", "$T/v0.json"},
     "read_manifest: $T/v0.json: key \"format\" = \"nvh.manifest.v0\": expected "
     "\"nvh.manifest.v1\""},
    // gate
    {"gate_no_logs", {"gate"}, "LOGS is required"},
    {"gate_missing_log",
     {"gate", "$T/nowhere.jsonl"},
     "LOGS: Path does not exist: $T/nowhere.jsonl"},
    {"gate_malformed_log",
     {"gate", "$T/bad.jsonl"},
     "read_route_log: $T/bad.jsonl:1: missing key \"route\""},
    {"gate_backend_unknown",
     {"gate", "--backend", "tpu", "$T/bad.jsonl"},
     "--backend: tpu not in {best,host,cuda}"},
    // bench
    {"bench_reps_too_few", {"bench", "--reps", "5"}, "--reps: Value 5 not in range 100 to 100000"},
    {"bench_reps_not_a_number", {"bench", "--reps", "many"}, "--reps: many is not a whole number"},
    {"bench_warmup_zero", {"bench", "--warmup", "0"}, "--warmup: Value 0 not in range 1 to 10000"},
    {"bench_group_unknown",
     {"bench", "--group", "gemm"},
     "--group: gemm not in {prefill,sweep,decode,msweep,depth,tma}"},
    {"bench_json_empty", {"bench", "--json", ""}, "--json: the value is empty (\"\")"},
    {"bench_m_zero", {"bench", "--m", "0"}, "--m: Value 0 not in range 1 to 1048576"},
    {"bench_m_not_a_number", {"bench", "--m", "x"}, "--m: x is not a whole number"},
    {"bench_shape_no_x",
     {"bench", "--shape", "4096"},
     "--shape: weight shape \"4096\": expected NxK, e.g. 14336x4096"},
    {"bench_shape_k_not_16",
     {"bench", "--shape", "4096x4100"},
     "--shape: weight shape \"4096x4100\": K = 4100 is not a multiple of 16"},
    {"bench_shape_n_zero",
     {"bench", "--shape", "0x4096"},
     "--shape: weight shape \"0x4096\": N = 0"},
    {"bench_shape_not_a_number",
     {"bench", "--shape", "4096x4k"},
     "--shape: weight shape \"4096x4k\": K = \"4k\" is not a whole number below 10^9"},
    // replay
    {"replay_missing_manifest",
     {"replay", "$T/nowhere.json"},
     "MANIFEST: File does not exist: $T/nowhere.json"},
    {"replay_prompt_zero",
     {"replay", "--prompt", "0", "$T/bad_replay.json"},
     "--prompt: Value 0 not in range 1 to 1073741824"},
    {"replay_chunk_not_a_number",
     {"replay", "--chunk", "big", "$T/bad_replay.json"},
     "--chunk: big is not a whole number"},
    {"replay_route_unknown",
     {"replay", "--route", "fast", "$T/bad_replay.json"},
     "--route: fast not in {natural,prefill_scalar,prefill_vec8,prefill_fused}"},
    {"replay_json_with_dry_run",
     {"replay", "--dry-run", "--json", "$T/r.json", "$T/bad_replay.json"},
     "--dry-run excludes --json"},
    {"replay_json_empty",
     {"replay", "--json", "", "$T/bad_replay.json"},
     "--json: the value is empty (\"\")"},
    {"replay_invalid_manifest",
     {"replay", "--dry-run", "$T/bad_replay.json"},
     "replay manifest $T/bad_replay.json: "},
    // run
    {"run_inputs_missing", {"run"}, "--inputs is required"},
    {"run_inputs_not_a_file",
     {"run", "--inputs", "$T/nowhere.safetensors"},
     "--inputs: File does not exist: $T/nowhere.safetensors"},
    {"run_route_unknown",
     {"run", "--inputs", "$T/good.safetensors", "--route", "fast"},
     "--route: fast not in "
     "{empty,gemv_mma,gemv_scalar,native_sm120,prefill_fused,prefill_vec8,prefill_scalar}"},
    {"run_backend_unknown",
     {"run", "--inputs", "$T/good.safetensors", "--backend", "tpu"},
     "--backend: tpu not in {best,host,cuda}"},
    {"run_out_in_missing_folder",
     {"run", "--inputs", "$T/good.safetensors", "--out", "$T/nowhere/y.safetensors"},
     "--out: $T/nowhere/y.safetensors: the folder $T/nowhere does not exist"},
    {"run_not_a_safetensors_file",
     {"run", "--inputs", "$T/bad.json"},
     "read_safetensors: $T/bad.json: the file has 1 bytes, fewer than the 8 of the header length"},
    {"run_missing_tensor",
     {"run", "--inputs", "$T/no_b.safetensors"},
     "tensor_case_from: $T/no_b.safetensors: no tensor \"B\""},
    {"run_wrong_dtype",
     {"run", "--inputs", "$T/a_f32.safetensors"},
     "tensor_case_from: $T/a_f32.safetensors: tensor A has dtype F32: must be F16 or BF16"},
    {"run_wrong_shape",
     {"run", "--inputs", "$T/scales_shape.safetensors"},
     "tensor_case_from: $T/scales_shape.safetensors: tensor weight_scale has shape [16,16]: must "
     "be"},
};

class BadCommandLine : public CliFiles, public ::testing::WithParamInterface<BadInput> {};

TEST_P(BadCommandLine, FailsNamingTheBadValue) {
  const BadInput& bad = GetParam();
  const CliRun r = cli(expand(bad.args));
  EXPECT_NE(r.rc, 0);
  const std::string message = expand({bad.message})[0];
  EXPECT_NE(r.err.find(message), std::string::npos)
      << "expected: " << message << "\nstderr: " << r.err;
  EXPECT_EQ(r.out.find("wrote"), std::string::npos) << "nothing may be written: " << r.out;
}

INSTANTIATE_TEST_SUITE_P(Cli, BadCommandLine, ::testing::ValuesIn(kBadInputs),
                         [](const ::testing::TestParamInfo<BadInput>& i) {
                           return std::string(i.param.name);
                         });

TEST_F(CliFiles, CompareFailsWhenNoCaseIsInCommon) {
  for (const auto& [a, b] :
       {std::pair{"no_cases_1.json", "no_cases_2.json"}, std::pair{"one.json", "other.json"}}) {
    const CliRun r = cli({"compare", path(a), path(b)});
    EXPECT_EQ(r.rc, 1) << a;
    EXPECT_NE(r.out.find("manifests have NO CASE IN COMMON: a = " + path(a) + ", b = " + path(b)),
              std::string::npos)
        << r.out;
  }
  EXPECT_EQ(cli({"compare", path("one.json"), path("one.json")}).rc, 0);
}

TEST_F(CliFiles, DeviceCoverageNeedsAProbeBuildAndSaysWhichFile) {
  if (nvh::probe::enabled()) GTEST_SKIP() << "this is a probe build: --device-coverage works here";
  const CliRun r = cli({"verify", "--device-coverage", path("x.info")});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("verify: --device-coverage " + path("x.info") +
                       ": this build has no branch probes"),
            std::string::npos)
      << r.err;
}

// ---------------------------------------------------------------------------
// run --inputs: a file the test wrote, on every route or one.

// The digest of each line's route ("route  OUTCOME  digest ..."); "" when the route is not listed.
std::string digest_on_line(const std::string& out, const std::string& route,
                           const std::string& outcome) {
  const std::size_t at = out.find("\n" + route + " ");
  if (at == std::string::npos) return "";
  std::istringstream line(out.substr(at + 1, out.find('\n', at + 1) - at - 1));
  std::string name, got_outcome, digest;
  line >> name >> got_outcome >> digest;
  return got_outcome == outcome ? digest : "outcome " + got_outcome;
}

TEST_F(CliFiles, RunChecksEveryRouteOfAFileAndWritesEachY) {
  const CliRun r = cli(expand({"run", "--inputs", "$T/good.safetensors", "--backend", "host",
                               "--out", "$T/y.safetensors"}));
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  const CaseSpec spec = make_case("adhoc", 2, 32, 128, 16, DType::fp16, true, /*exact=*/true);
  auto host = nvh::make_host_backend();
  const std::string digest = run_case(*host, spec, make_inputs(spec)).y_sha256;
  EXPECT_NE(r.out.find("reference Y " + digest + " (exact: every route must give these bits)"),
            std::string::npos)
      << r.out;
  for (const char* route :
       {"gemv_mma", "gemv_scalar", "prefill_fused", "prefill_vec8", "prefill_scalar"}) {
    EXPECT_EQ(digest_on_line(r.out, route, "OK"), digest) << route << "\n" << r.out;
  }
  EXPECT_EQ(digest_on_line(r.out, "empty", "NOT_SUPPORTED"), "-") << r.out;
  EXPECT_EQ(digest_on_line(r.out, "native_sm120", "NOT_SUPPORTED"), "-") << r.out;
  EXPECT_NE(r.out.find("wrote Y of 5 route(s) to " + path("y.safetensors")), std::string::npos)
      << r.out;
  const nvh::SafeTensorsFile y = nvh::read_safetensors(path("y.safetensors"));
  ASSERT_EQ(y.tensors.size(), 5u);
  const nvh::SafeTensor& mma = y.tensors.at("Y.gemv_mma");
  EXPECT_EQ(nvh::tensor_sha256("fp16", mma.shape, mma.data.data(), mma.data.size()), digest);
}

TEST_F(CliFiles, RunOneRouteWritesItsYAsY) {
  const CliRun r = cli(expand({"run", "--inputs", "$T/good.safetensors", "--backend", "host",
                               "--route", "prefill_vec8", "--out", "$T/y.safetensors"}));
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(digest_on_line(r.out, "prefill_vec8", "OK"), "") << r.out;
  EXPECT_EQ(digest_on_line(r.out, "gemv_mma", "OK"), "") << r.out;
  const nvh::SafeTensorsFile y = nvh::read_safetensors(path("y.safetensors"));
  ASSERT_EQ(y.tensors.count("Y"), 1u);
  EXPECT_EQ(y.metadata.at("Y.route"), "prefill_vec8");
}

// A waiver is never a pass: a run in which no route ran checked nothing.
TEST_F(CliFiles, RunFailsWhenNoRouteRan) {
  const CliRun r = cli(expand({"run", "--inputs", "$T/good.safetensors", "--backend", "host",
                               "--route", "native_sm120", "--out", "$T/y.safetensors"}));
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_EQ(digest_on_line(r.out, "native_sm120", "NOT_SUPPORTED"), "-") << r.out;
  EXPECT_NE(r.out.find("no route ran: nothing written to " + path("y.safetensors")),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("FAIL: no route ran, so nothing was checked"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(path("y.safetensors")));
}

// --dry-run plans as the H200 decides, wgmma included: qkv_proj's shape at M
// = 256 takes prefill_fused there (one step a call). With sm = 90 alone
// the plan named prefill_vec8, dequant and GEMM, two steps a call.
TEST_F(CliFiles, ReplayDryRunPlansAsTheH200Decides) {
  write("qkv.json", R"({"name": "qkv", "nodes": [{"name": "qkv_proj", "N": 8192, "K": 5120}]})");
  const CliRun r = cli({"replay", "--dry-run", "--prompt", "512", path("qkv.json")});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("2 calls, 2 timed GPU steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("route natural on sm_90 with wgmma (dry run): prefill_fused x 2"),
            std::string::npos)
      << r.out;
}

TEST(Cli, HelpNamesNoForkAndWhatACrashDoes) {
  const CliRun r = cli({"verify", "--help"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("--no-fork"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a case that crashes with a signal is a FAIL and the run goes on"),
            std::string::npos)
      << r.out;
}

// GoogleTest's sharding variables, set for one call and restored.
class ShardEnvironment {
 public:
  ShardEnvironment(const char* total, const char* index, const std::string& status) {
    set("GTEST_TOTAL_SHARDS", total);
    set("GTEST_SHARD_INDEX", index);
    set("GTEST_SHARD_STATUS_FILE", status.empty() ? nullptr : status.c_str());
  }
  ~ShardEnvironment() {
    for (const char* name : {"GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "GTEST_SHARD_STATUS_FILE"})
      ::unsetenv(name);
  }

 private:
  static void set(const char* name, const char* value) {
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
};

TEST_F(CliFiles, VerifyHonoursGoogleTestShardingAndTouchesTheStatusFile) {
  // The model and golden groups decide nothing here and cost 20 s a run under gcov.
  const std::vector<std::string> run =
      expand({"verify", "--backend", "host", "--family", "empty", "--cases", "0", "--skip", "model",
              "--skip", "golden", "--out", "$T/s"});
  {
    const ShardEnvironment env("3", "1", path("status"));
    const CliRun r = cli(run);
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find(", shard 1/3 (tasks i with i % 3 == 1)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("gate not judged: shard 1/3: gate judged after merge"), std::string::npos)
        << r.out;
    EXPECT_TRUE(fs::exists(path("status")));
  }
  {
    const ShardEnvironment env("3", "1", "");
    std::vector<std::string> with_option = run;
    with_option.insert(with_option.end(), {"--shard", "0/2"});  // the option wins
    const CliRun r = cli(with_option);
    EXPECT_NE(r.out.find(", shard 0/2 (tasks i with i % 2 == 0)"), std::string::npos) << r.out;
  }
  for (const auto& [total, index, message] :
       {std::tuple{"2", "2", "GTEST_SHARD_INDEX = 2: must be below GTEST_TOTAL_SHARDS = 2"},
        std::tuple{"2", "-1", "GTEST_SHARD_INDEX = -1: must be a whole number 0 or more"},
        std::tuple{"x", "0", "GTEST_TOTAL_SHARDS = x: must be a whole number 1 or more"},
        std::tuple{static_cast<const char*>(nullptr), "1",
                   "GTEST_SHARD_INDEX = 1: set without GTEST_TOTAL_SHARDS"}}) {
    const ShardEnvironment env(total, index, "");
    const CliRun r = cli(run);
    EXPECT_EQ(r.rc, 2) << message;
    EXPECT_NE(r.err.find(std::string("nvfp4-harness: ") + message), std::string::npos) << r.err;
  }
}

// ---------------------------------------------------------------------------
// verify through the command line: crash isolation, and a filtered run.

// Crashing workers must not leave core files behind.
void no_core_files() {
  const rlimit none{0, 0};
  ::setrlimit(RLIMIT_CORE, &none);
}

std::string file_text(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> decode_miss_cases() {
  std::vector<std::string> names;
  for (const CaseSpec& s : find_family("decode_miss")->examples) names.push_back(s.name());
  return names;
}

// The gate of a filtered run is shown, not judged, and says so without FAILED or MISSING.
void expect_gate_not_judged(const CliRun& r) {
  const std::string gate = r.out.substr(r.out.find("route coverage:"));
  EXPECT_NE(gate.find("gate not judged: --family selects 1 of " +
                      std::to_string(all_families().size()) + " families"),
            std::string::npos)
      << gate;
  EXPECT_EQ(gate.find("FAILED"), std::string::npos) << gate;
  EXPECT_EQ(gate.find("MISSING"), std::string::npos) << gate;
  EXPECT_NE(gate.find("not reached"), std::string::npos) << gate;
}

TEST_F(CliFiles, VerifyFailsACrashingCaseAndRunsTheRest) {
  no_core_files();
  const std::vector<std::string> names = decode_miss_cases();
  ASSERT_GE(names.size(), 6u);
  CliHooks hooks;
  hooks.before_case = [&](const std::string& family, const std::string& name) {
    // In a worker process: a gtest assertion there would be lost, a throw is a FAIL here.
    if (family == "golden") return;  // the golden cases run after the family, untouched
    if (family != "decode_miss") throw std::logic_error("a case of " + family + " ran");
    if (name == names[1]) std::raise(SIGFPE);  // as an integer division by zero in a kernel would
    if (name == names[3]) throw std::runtime_error("injected fault in " + name);
    if (name == names[4]) std::raise(SIGSEGV);
  };
  // The primitives and the model are left out (a minute of the coverage build's test time); the
  // golden group runs after the crashes.
  const CliRun r = cli(expand({"verify", "--backend", "host", "--family", "decode_miss", "--cases",
                               "0", "--skip", "primitives", "--skip", "model", "--out", "$T/v"}),
                       hooks);
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  const std::string total = std::to_string(names.size());
  EXPECT_NE(r.out.find("decode_miss: " + total + " cases (" + total + " boundary, 0 random): OK " +
                       std::to_string(names.size() - 3) + ", FAIL 3"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("FAIL decode_miss/" + names[1] + ": crashed: SIGFPE (Floating point exception)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("FAIL decode_miss/" + names[3] + ": threw: injected fault in " + names[3]),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("FAIL decode_miss/" + names[4] + ": crashed: SIGSEGV (Segmentation fault)"),
            std::string::npos)
      << r.out;
  // The group after the crashes ran too; the skipped ones did not.
  EXPECT_NE(r.out.find("primitives: skipped (--skip primitives)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model: skipped (--skip model)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(" operator calls per prompt"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("golden: 8 of 8 seed8 digests equal to "
                       "properties/nvfp4_matmul/golden/seed8.host.json (built in)"),
            std::string::npos)
      << r.out;
  expect_gate_not_judged(r);

  // JUnit and the manifest record the crash; the cases around it have digests.
  const std::string junit = file_text(dir_ / "v" / "junit.xml");
  EXPECT_NE(junit.find("FAIL: crashed: SIGFPE (Floating point exception)"), std::string::npos)
      << junit;
  const nvh::Manifest m = nvh::read_manifest(path("v/manifest.json"));
  EXPECT_EQ(m.metadata.at("fail/decode_miss/" + names[1]),
            "crashed: SIGFPE (Floating point exception)");
  EXPECT_EQ(m.metadata.at("fail/decode_miss/" + names[4]), "crashed: SIGSEGV (Segmentation fault)");
  for (std::size_t i : {0, 2, 5})
    EXPECT_EQ(m.cases.count("decode_miss/" + names[i]), 1u) << names[i];
  EXPECT_EQ(m.cases.count("decode_miss/" + names[1]), 0u);
  // A fresh worker after each crash: its launches reached the run's route log.
  std::size_t after_crash = 0;
  for (const nvh::LaunchRecord& rec : nvh::read_route_log(path("v/routes.jsonl"))) {
    if (rec.family == "decode_miss" && (rec.case_name == names[2] || rec.case_name == names[5]))
      ++after_crash;
  }
  EXPECT_GT(after_crash, 0u);
}

// --no-fork: the cases run in this process (a throw is still one case's FAIL);
// a filtered run's exit code is its cases', with the gate shown but not judged.
TEST_F(CliFiles, VerifyInProcessWithAFamilyFilterExitsByItsCases) {
  const CliRun r = cli(
      expand({"verify", "--backend", "host", "--no-fork", "--family", "decode_miss", "--cases", "0",
              "--skip", "primitives", "--skip", "model", "--skip", "golden", "--out", "$T/v"}));
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(", in process (--no-fork)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("route targets not judged (no random cases)"), std::string::npos) << r.out;
  expect_gate_not_judged(r);
  EXPECT_NE(r.out.find("; gate not judged: --family selects 1 of"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace nvfp4
