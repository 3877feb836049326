// Rerunning one case and sharding (issue 15): every case name parses back
// into its case, `--case` reruns a case of a run's manifest with the run's
// digest, and n shards merged are the unsharded run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/manifest.h"
#include "harness/route_gate.h"
#include "harness/route_record.h"
#include "harness/sha256.h"
#include "harness/verify_driver.h"
#include "properties/nvfp4_matmul/case_lists.h"
#include "properties/nvfp4_matmul/families.h"
#include "properties/nvfp4_matmul/suite.h"

namespace nvfp4 {
namespace {

namespace fs = std::filesystem;
using nvh::MergeOptions;
using nvh::VerifyOptions;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// Every field of a case, so two specs that name() alike but differ in a
// field name() leaves out show up.
std::string fields(const CaseSpec& s) {
  std::ostringstream o;
  o << s.family << " " << s.M << " " << s.N << " " << s.K << " " << s.block_size << " "
    << dtype_name(s.dtype) << " " << s.bias << s.exact << " " << s.a_offset << "," << s.b_offset
    << "," << s.scratch_offset << "," << s.scales_offset << "," << s.scale2_offset << ","
    << s.bias_offset << "," << s.y_offset << " " << s.seed << " "
    << (s.options.force_route ? route_name(*s.options.force_route) : "-") << " "
    << s.options.native_opt_in << " " << value_class_name(s.value_class);
  if (const auto& c = s.options.simulated_caps)
    o << " caps " << c->sm << " " << c->native_fp4 << " " << c->wgmma << " " << c->backend;
  return o.str();
}

// The digest of every input a case makes (A, B, weight_scale, weight_scale_2, bias).
std::string inputs_digest(const CaseSpec& s) {
  const CaseInputs in = make_inputs(s);
  std::string all = nvh::sha256_hex(in.A.data(), in.A.size() * 2) +
                    nvh::sha256_hex(in.W.packed.data(), in.W.packed.size()) +
                    nvh::sha256_hex(in.W.scales.data(), in.W.scales.size()) +
                    nvh::sha256_hex(&in.W.global_scale, sizeof in.W.global_scale) +
                    nvh::sha256_hex(in.bias.data(), in.bias.size() * 2);
  return nvh::sha256_hex(all.data(), all.size());
}

TEST(CaseNames, EveryCaseOfADefaultRunParsesBackIntoItself) {
  // The plan's keys against the cases drawn here, independently: each
  // family's examples and 25 random cases of seed 1, the model's ways, seed8.
  nvh::BackendDescription host;
  const std::vector<std::string> keys =
      nvh::planned_case_keys(nvfp4_suite(), nvh::VerifyOptions{}, host);
  std::vector<std::pair<std::string, CaseSpec>> drawn;
  for (const Family& f : all_families()) {
    for (const CaseSpec& s : f.examples) drawn.push_back({f.name, s});
    for (const CaseSpec& s : sample_family(f, 25, 1)) drawn.push_back({f.name, s});
  }
  std::size_t model_ways = 0;
  for (const std::string& key : keys) model_ways += key.rfind("model/", 0) == 0;
  for (const CaseSpec& s : named_case_list("seed8")) drawn.push_back({"golden", s});
  ASSERT_GT(drawn.size(), 300u);  // 14 families, their examples and 25 random cases each, and seed8
  ASSERT_EQ(keys.size(), drawn.size() + model_ways);
  std::size_t at = 0;
  for (const std::string& key : keys) {
    if (key.rfind("model/", 0) == 0) continue;
    SCOPED_TRACE(key);
    const auto& [family, spec] = drawn[at++];
    EXPECT_EQ(key, family + "/" + spec.name());
    const CaseSpec parsed = parse_case_key(key);
    CaseSpec expected = spec;
    if (family != "golden")
      expected.family = family;  // examples may leave it empty: the key carries it
    EXPECT_EQ(fields(parsed), fields(expected));
    EXPECT_EQ(inputs_digest(parsed), inputs_digest(spec));
  }
  EXPECT_GT(model_ways, 0u);
}

TEST(CaseNames, EveryOptionalFieldRoundTrips) {
  CaseSpec s = make_case("adhoc", 9, 64, 128, 16, DType::bf16, true, true, 18446744073709551615u);
  s.a_offset = 2;
  s.b_offset = 1;
  s.scratch_offset = 4;
  s.scales_offset = 3;
  s.scale2_offset = 4;
  s.bias_offset = 2;
  s.y_offset = 6;
  s.options.force_route = Route::native_sm120;
  s.options.native_opt_in = true;
  Caps caps;
  caps.sm = 121;
  caps.native_fp4 = true;
  caps.wgmma = true;
  s.options.simulated_caps = caps;
  s.value_class = ValueClass::scale_nan_7f;
  const std::string name = s.name();
  EXPECT_EQ(name,
            "bf16_M9_N64_K128_bs16_bias_exact_offA2_offB1_offS4_offScale3_offGlobal4_offBias2_"
            "offY6_force-native_sm120_"
            "native_sm121_fp4_wgmma_v-scale_nan_7f_s18446744073709551615");
  EXPECT_EQ(fields(parse_case_name(name)), fields(s));
  for (Route r : kAllRoutes) {
    CaseSpec forced = make_case("adhoc", 1, 2, 32, 16, DType::fp16, false);
    forced.options.force_route = r;
    EXPECT_EQ(fields(parse_case_name(forced.name())), fields(forced)) << forced.name();
  }
  for (ValueClass c : all_value_classes()) {
    CaseSpec v = make_case("adhoc", 1, 2, 32, 16, DType::fp16, true);
    v.value_class = c;
    EXPECT_EQ(fields(parse_case_name(v.name())), fields(v)) << v.name();
  }
}

TEST(CaseNames, BadNamesSayWhichPartIsWrong) {
  const auto err = [](const std::string& name) { return error_of([&] { parse_case_name(name); }); };
  EXPECT_EQ(err("fp32_M1_N1_K16_bs16_s1"),
            "parse_case_name: name = fp32_M1_N1_K16_bs16_s1: at \"fp32_M1_N1_K16_bs16_s1\": "
            "expected the dtype, fp16 "
            "or bf16");
  EXPECT_EQ(err("fp16_M1_N1_K16_s1"),
            "parse_case_name: name = fp16_M1_N1_K16_s1: at \"_s1\": expected \"_bs\" (block_size)");
  EXPECT_EQ(err("fp16_Mx_N1_K16_bs16_s1"),
            "parse_case_name: name = fp16_Mx_N1_K16_bs16_s1: at \"x_N1_K16_bs16_s1\": M: expected "
            "a whole number");
  EXPECT_EQ(err("fp16_M01_N1_K16_bs16_s1"),
            "parse_case_name: name = fp16_M01_N1_K16_bs16_s1: at \"01_N1_K16_bs16_s1\": M: a "
            "leading 0 (name() writes "
            "none)");
  EXPECT_EQ(err("fp16_M1_N1_K16_bs16_offA0_s1"),
            "parse_case_name: name = fp16_M1_N1_K16_bs16_offA0_s1: at \"_s1\": A's offset: 0 "
            "(name() leaves a zero "
            "offset out)");
  EXPECT_EQ(err("fp16_M1_N1_K16_bs16_force-gemv_fast_s1"),
            "parse_case_name: name = fp16_M1_N1_K16_bs16_force-gemv_fast_s1: at \"gemv_fast_s1\": "
            "expected a route "
            "name after _force-");
  EXPECT_EQ(err("fp16_M1_N1_K16_bs16_v-a_purple_s1"),
            "parse_case_name: name = fp16_M1_N1_K16_bs16_v-a_purple_s1: at \"a_purple_s1\": "
            "expected a value class "
            "after _v-");
  EXPECT_EQ(err("fp16_M1_N1_K16_bs16_s1_bias"),
            "parse_case_name: name = fp16_M1_N1_K16_bs16_s1_bias: at \"_bias\": unexpected text "
            "after the seed (or a "
            "field out of name()'s order)");
  EXPECT_EQ(err("fp16_M1_N1_K16_bs16_exact_bias_s1"),
            "parse_case_name: name = fp16_M1_N1_K16_bs16_exact_bias_s1: at \"_bias_s1\": expected "
            "\"_s\" (the seed, "
            "last)");
  EXPECT_EQ(err("fp16_M1_N1_K16_bs16_s18446744073709551616"),
            "parse_case_name: name = fp16_M1_N1_K16_bs16_s18446744073709551616: at "
            "\"18446744073709551616\": the "
            "seed: out of range");
  EXPECT_EQ(
      err("fp16_M1_N1_K16_bs16_s"),
      "parse_case_name: name = fp16_M1_N1_K16_bs16_s: at \"\": the seed: expected a whole number");
  EXPECT_EQ(err(""), "parse_case_name: name = : at \"\": expected the dtype, fp16 or bf16");
}

TEST(CaseNames, BadKeysSayWhichPartIsWrong) {
  const auto err = [](const std::string& key) { return error_of([&] { parse_case_key(key); }); };
  EXPECT_NE(err("fp16_M1_N1_K16_bs16_s1")
                .find("parse_case_key: key = fp16_M1_N1_K16_bs16_s1: no '/': name the case "
                      "as manifest.json keys it, FAMILY/CASE"),
            std::string::npos);
  EXPECT_NE(err("nosuch/fp16_M1_N1_K16_bs16_s1")
                .find("parse_case_key: key = nosuch/fp16_M1_N1_K16_bs16_s1: unknown "
                      "family \"nosuch\" (the families: decode, "),
            std::string::npos);
  EXPECT_EQ(err("decode/fp16_M1_N1"),
            "parse_case_key: key = decode/fp16_M1_N1: parse_case_name: name = fp16_M1_N1: at \"\": "
            "expected \"_K\" (K)");
  EXPECT_EQ(err("golden/fp16_M1_N1_K16_bs16_s1"),
            "parse_case_key: key = golden/fp16_M1_N1_K16_bs16_s1: fp16_M1_N1_K16_bs16_s1 is not a "
            "case of the seed8 list");
  EXPECT_EQ(parse_case_key("decode/fp16_M1_N17_K32_bs16_bias_s1").family, "decode");
}

// ---------------------------------------------------------------------------
// --case, shards and merge, through run_verify and run_merge on the host.

std::string temp_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("nvfp4_shards_" + name);
  fs::remove_all(dir);
  return dir.string();
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Ran {
  int rc;
  std::string out;
};

Ran verify(VerifyOptions o) {
  std::ostringstream out;
  const int rc = nvh::run_verify(
      nvfp4_suite(), [] { return nvh::make_host_backend(); }, o, out);
  return {rc, out.str()};
}

Ran merge(const std::string& out_dir, const std::vector<std::string>& shards) {
  std::ostringstream out;
  MergeOptions m;
  m.out_dir = out_dir;
  m.shard_dirs = shards;
  const int rc = nvh::run_merge(nvfp4_suite(), m, out);
  return {rc, out.str()};
}

// The summary line without its time: outcome counts and the gate's verdict.
std::string verdict(const std::string& out) {
  const std::size_t at = out.find("summary: ");
  const std::size_t end = out.rfind("; ", out.find('\n', at));
  return at == std::string::npos ? "(no summary)" : out.substr(at, end - at);
}

TEST(CaseRerun, ACaseFromARunsManifestRerunsWithItsDigest) {
  VerifyOptions whole;
  whole.families = {"decode"};
  whole.random_cases = 3;
  whole.skip = {"model", "primitives"};
  whole.out_dir = temp_dir("whole");
  ASSERT_EQ(verify(whole).rc, 0);
  const nvh::Manifest m = nvh::read_manifest(whole.out_dir + "/manifest.json");
  // A boundary example, the last random case, and a golden case.
  std::vector<std::string> keys = {"decode/" + find_family("decode")->examples[3].name()};
  for (const auto& [key, digest] : m.cases) {
    if (key.rfind("decode/", 0) == 0) keys.push_back(key);
  }
  keys.erase(keys.begin() + 1, keys.end() - 1);
  keys.push_back(m.cases.rbegin()->first);
  ASSERT_EQ(keys.back().rfind("golden/", 0), 0u) << keys.back();

  VerifyOptions again;
  again.cases = keys;
  again.seed = 99;  // the name carries the case's seed: the run's does not matter
  again.out_dir = temp_dir("again");
  const Ran r = verify(again);
  EXPECT_EQ(r.rc, 0) << r.out;
  for (const std::string& key : keys) {
    EXPECT_NE(r.out.find("case " + key + ": OK, digest " + m.cases.at(key) + "\n"),
              std::string::npos)
        << key << "\n"
        << r.out;
  }
  EXPECT_NE(r.out.find("gate not judged: --case names 3 cases"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("primitives:"), std::string::npos) << r.out;  // only what was named
  EXPECT_EQ(r.out.find("model:"), std::string::npos) << r.out;
  // Its own manifest holds the same digests under the same keys.
  const nvh::Manifest rerun = nvh::read_manifest(again.out_dir + "/manifest.json");
  for (const std::string& key : keys) EXPECT_EQ(rerun.cases.at(key), m.cases.at(key)) << key;
}

TEST(CaseRerun, AModelWayRerunsWithItsTokenHash) {
  VerifyOptions o;
  o.cases = {"model/prefill"};
  o.out_dir = temp_dir("model");
  const Ran r = verify(o);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("case model/prefill: OK, digest "), std::string::npos) << r.out;
}

// The gate over `launches` passes, and fails naming the family when any one
// family's launches are taken away.
void expect_the_gate_needs_every_family(const std::vector<nvh::LaunchRecord>& launches) {
  const nvh::OperatorSuite& suite = nvfp4_suite();
  const nvh::GateDeclaration declaration = suite.gate_declaration();
  const nvh::HardwareGates gates = suite.hardware_gates(*nvh::make_host_backend());
  const nvh::GateReport full = nvh::evaluate_gate(declaration, gates, launches);
  ASSERT_TRUE(full.passed()) << nvh::render_gate_text(full);
  for (const std::string& f : suite.family_names()) {
    std::vector<nvh::LaunchRecord> without;
    for (const auto& r : launches) {
      if (r.family != f) without.push_back(r);
    }
    const nvh::GateReport report = nvh::evaluate_gate(declaration, gates, without);
    EXPECT_FALSE(report.passed()) << "removing family " << f << " went unnoticed";
    const std::string text = nvh::render_gate_text(report);
    EXPECT_NE(text.find("family \"" + f + "\": MISSING"), std::string::npos) << text;
  }
}

// A run over every family, whole and as three shards merged: --cases 0
// keeps it affordable on the host (the families' route targets, shares of
// random cases, are then not judged; ShardsOfOneFamilyJudgeItsTargetsAfterMerge
// judges them). The model and golden groups are left out for time (their
// results are merged by the same driver as a family's cases). Checked:
// - the shards merged are the whole run: a result for every case the run
//   plans, the same digests, gate file, launches and verdict (n = 1, the
//   whole run's own folder merged, is VerifyDriver.ShardsMergedEqualTheWholeRun's,
//   on a toy suite). Two shards are run by
//   CliFiles.VerifyHonoursGoogleTestShardingAndTouchesTheStatusFile, and on
//   the GPU by ci/device/h200-check.sh and two-gpus.sh;
// - the gate over the families' own launches: it passes with every family,
//   and fails, naming the family, when any one family's launches are taken
//   away (the seed's blind spot: a family that never runs). It had a run of
//   its own, which these launches replace.
TEST(Shards, ThreeMergedAreTheWholeRunWhoseGateNeedsEveryFamily) {
  VerifyOptions o;
  o.random_cases = 0;
  o.skip = {"model", "golden"};
  o.out_dir = temp_dir("unsharded");  // a name no other test of this binary uses (ctest -j)
  const Ran whole = verify(o);
  EXPECT_EQ(whole.rc, 0) << whole.out;
  EXPECT_NE(whole.out.find("route gate passed"), std::string::npos) << whole.out;
  const nvh::Manifest expected = nvh::read_manifest(o.out_dir + "/manifest.json");
  const std::string expected_gate = file_text(o.out_dir + "/route_gate.json");
  ASSERT_GT(expected.cases.size(), 200u);
  const std::vector<nvh::LaunchRecord> launches = nvh::read_route_log(o.out_dir + "/routes.jsonl");
  expect_the_gate_needs_every_family(launches);

  constexpr int kShards = 3;
  std::vector<std::string> shards;
  for (int i = 0; i < kShards; ++i) {
    VerifyOptions s = o;
    s.shard = {i, kShards};
    s.out_dir = temp_dir("shard" + std::to_string(i) + "of" + std::to_string(kShards));
    const Ran part = verify(s);
    EXPECT_EQ(part.rc, 0) << part.out;
    EXPECT_NE(
        part.out.find("gate not judged: shard " + s.shard.text() + ": gate judged after merge"),
        std::string::npos)
        << part.out;
    shards.push_back(s.out_dir);
  }
  const std::string merged_dir = temp_dir("merged");
  const Ran merged = merge(merged_dir, shards);
  EXPECT_EQ(merged.rc, whole.rc) << merged.out;
  EXPECT_EQ(verdict(merged.out), verdict(whole.out));
  // Every planned case has its one result line (a case the host cannot run
  // has no digest in manifest.json, so the results are what is counted).
  const nvh::BackendDescription host;  // the host executor's, as the runs above
  std::vector<std::string> planned = nvh::planned_case_keys(nvfp4_suite(), o, host), results;
  std::ifstream lines(merged_dir + "/results.jsonl");
  for (std::string line; std::getline(lines, line);)
    results.push_back(nlohmann::json::parse(line).at("key").get<std::string>());
  std::sort(results.begin(), results.end());
  std::sort(planned.begin(), planned.end());
  EXPECT_EQ(results, planned);
  const nvh::Manifest m = nvh::read_manifest(merged_dir + "/manifest.json");
  EXPECT_EQ(m.cases, expected.cases);
  EXPECT_EQ(m.backend, expected.backend);
  EXPECT_EQ(file_text(merged_dir + "/route_gate.json"), expected_gate);
  EXPECT_EQ(nvh::read_route_log(merged_dir + "/routes.jsonl").size(), launches.size());
}

TEST(Shards, ShardsOfOneFamilyJudgeItsTargetsAfterMerge) {
  VerifyOptions o;
  o.families = {"decode"};
  o.random_cases = 6;
  o.skip = {"model", "golden"};
  o.out_dir = temp_dir("decode_whole");
  const Ran whole = verify(o);
  std::vector<std::string> shards;
  for (int i = 0; i < 3; ++i) {
    VerifyOptions s = o;
    s.shard = {i, 3};
    s.out_dir = temp_dir("decode_shard" + std::to_string(i));
    const Ran part = verify(s);
    EXPECT_NE(part.out.find("claims over the whole group not judged: shard " + s.shard.text()),
              std::string::npos)
        << part.out;
    shards.push_back(s.out_dir);
  }
  const Ran merged = merge(temp_dir("decode_merged"), shards);
  EXPECT_EQ(merged.rc, whole.rc);
  EXPECT_EQ(verdict(merged.out), verdict(whole.out));
  const std::string family_line = "  decode: 34 cases (28 boundary, 6 random): OK 34, FAIL 0";
  EXPECT_NE(whole.out.find(family_line), std::string::npos) << whole.out;
  EXPECT_NE(merged.out.find(family_line), std::string::npos) << merged.out;
}

// Cheap shards (one family, no random case) for merge's refusals.
std::string cheap_shard(const std::string& name, int index, int count, uint64_t seed = 1,
                        int random_cases = 0) {
  VerifyOptions o;
  o.families = {"empty"};
  o.random_cases = random_cases;
  o.seed = seed;
  o.skip = {"model", "golden", "primitives"};
  o.shard = {index, count};
  o.out_dir = temp_dir(name);
  verify(o);
  return o.out_dir;
}

std::string merge_error(const std::vector<std::string>& shards) {
  return error_of([&] { merge(temp_dir("refused"), shards); });
}

TEST(Shards, MergeRefusesShardsThatAreNotOneRun) {
  const std::string a = cheap_shard("a", 0, 2), b = cheap_shard("b", 1, 2);
  EXPECT_EQ(merge(temp_dir("ab"), {a, b}).rc, 0);
  EXPECT_EQ(merge_error({a}),
            "run_merge: shard 1/2 is missing: merge every shard of the run (given 1)");
  EXPECT_EQ(merge_error({a, b, a}),
            "run_merge: " + a + ": shard 0/2 given twice (" + a + " is it too)");
  const std::string other_seed = cheap_shard("seed", 1, 2, 7);
  EXPECT_EQ(merge_error({a, other_seed}), "run_merge: " + other_seed + ": seed = 7, but " + a +
                                              " has 1: the shards of one run share it");
  const std::string more_cases = cheap_shard("more", 1, 2, 1, 2);
  EXPECT_EQ(merge_error({a, more_cases}), "run_merge: " + more_cases + ": random_cases = 2, but " +
                                              a + " has 0: the shards of one run share it");
  const std::string of_three = cheap_shard("three", 1, 3);
  EXPECT_EQ(merge_error({a, of_three}),
            "run_merge: " + of_three + ": shard 1/3, but " + a + " is one of 2 shards");

  // Another backend: the description each shard wrote differs.
  const std::string gpu = cheap_shard("gpu", 1, 2);
  std::string meta = file_text(gpu + "/shard.json");
  meta.replace(meta.find("\"host executor\""), 15, "\"NVIDIA H200\"");
  std::ofstream(gpu + "/shard.json") << meta;
  EXPECT_NE(merge_error({a, gpu}).find("run_merge: " + gpu + ": backend = {"), std::string::npos)
      << merge_error({a, gpu});

  // A case in two shards: shard 1's results claim one of shard 0's cases.
  const std::string overlap = cheap_shard("overlap", 1, 2);
  const std::string first_of_a =
      file_text(a + "/results.jsonl").substr(0, file_text(a + "/results.jsonl").find('\n'));
  std::ofstream(overlap + "/results.jsonl", std::ios::app) << first_of_a << "\n";
  EXPECT_NE(merge_error({a, overlap}).find("task 0 (empty/"), std::string::npos)
      << merge_error({a, overlap});
  EXPECT_NE(merge_error({a, overlap}).find(") is not one of shard 1/2's"), std::string::npos);

  // A manifest naming another shard's case.
  const std::string foreign = cheap_shard("foreign", 1, 2);
  nvh::Manifest m = nvh::read_manifest(foreign + "/manifest.json");
  const nvh::Manifest of_a = nvh::read_manifest(a + "/manifest.json");
  m.cases.insert(*of_a.cases.begin());
  nvh::write_manifest(m, foreign + "/manifest.json");
  EXPECT_EQ(merge_error({a, foreign}), "run_merge: " + foreign + "/manifest.json: case " +
                                           of_a.cases.begin()->first +
                                           " is not one of shard 1/2's (overlapping shards?)");

  // A shard that did not finish.
  const std::string cut = cheap_shard("cut", 1, 2);
  std::ofstream(cut + "/results.jsonl", std::ios::trunc);
  EXPECT_NE(merge_error({a, cut}).find("run_merge: " + cut + " has no result for empty/"),
            std::string::npos)
      << merge_error({a, cut});
}

}  // namespace
}  // namespace nvfp4
