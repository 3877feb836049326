// The verify driver on a toy operator suite, with no operator of this tree:
// what the driver itself promises (each case's outcome recorded, a crash
// failing only its case, the suite's judgement of a group, a group this
// backend cannot run reported SKIPPED, the gate over the run's launches,
// --case, shards merged into the whole run's verdict).
#include "harness/verify_driver.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/manifest.h"
#include "harness/route_record.h"
#include "harness/sha256.h"

namespace nvh {
namespace {

// Cases "c0" .. "c<n-1>" of families "even" and "odd"; a case takes route
// "a" or "b" by its number's parity, and its digest is its name's SHA-256. Case
// "c13" of "odd" crashes its worker when crash_case is set; a route that
// differs from its family's fails the family's judgement.
std::string digest_of(const std::string& case_name) {
  return sha256_hex(case_name.data(), case_name.size());
}

class ToySuite : public OperatorSuite {
 public:
  bool crash_case = false;
  bool wrong_route = false;  // "even" cases take route "b"

  std::string name() const override { return "toy"; }
  std::string routes_text() const override { return "a\nb\n"; }
  GateDeclaration gate_declaration() const override {
    return {"toy", {{"a", {"even"}}, {"b", {"odd"}}}, {{"even", {"a"}}, {"odd", {"b"}}}};
  }
  HardwareGates hardware_gates(const Backend&) const override { return {}; }
  std::vector<std::string> family_names() const override { return {"even", "odd"}; }
  std::string family_aim(const std::string& f) const override { return "route of " + f; }
  CaseGroup family_group(const std::string& family, int random, uint64_t seed) const override {
    CaseGroup g{family, {}, 2, "", ""};
    const int first = family == "even" ? 0 : 1;
    for (int i = 0; i < 2 + random; ++i)
      g.cases.push_back("c" + std::to_string(first + 2 * (i + static_cast<int>(seed % 7))));
    return g;
  }
  std::vector<CaseGroup> other_groups(const BackendDescription&) const override {
    return {{"gpu_only", {"g0"}, 0, "", "the toy's GPU group needs a GPU"}};
  }
  std::vector<std::string> skippable() const override { return {"selfcheck", "gpu_only"}; }
  std::string self_check_group() const override { return "selfcheck"; }
  SelfCheckReport self_checks() const override {
    return {"selfcheck", {{"one", Outcome::ok, ""}}, "selfcheck: 1 check, OK\n"};
  }
  void check_case(const std::string& group, const std::string& case_name) const override {
    if (group != "even" && group != "odd" && group != "gpu_only")
      throw std::invalid_argument("toy: no group " + group);
    if (case_name.empty() || (case_name[0] != 'c' && case_name[0] != 'g'))
      throw std::invalid_argument("toy: no case " + case_name);
  }
  CaseResult run_case(Backend& backend, const std::string&,
                      const std::string& case_name) const override {
    if (crash_case && case_name == "c13") std::raise(SIGSEGV);
    const bool odd = std::stoi(case_name.substr(1)) % 2 == 1;
    const std::string route = odd || wrong_route ? "b" : "a";
    RouteRecorder::global().record(
        {"toy", route, "", odd ? "odd" : "even", backend.name(), backend.arch(), "", "", {}});
    return {Outcome::ok, "", route, digest_of(case_name), "", 0};
  }
  GroupJudgement judge_group(const CaseGroup& group, std::vector<CaseResult*>& results,
                             const BackendDescription&, bool whole) const override {
    GroupJudgement j;
    if (!whole) return j;
    const std::string want = group.name == "even" ? "a" : "b";
    for (const CaseResult* r : results) {
      if (r && r->outcome == Outcome::ok && r->route != want) {
        j.failures.push_back({"route-targets", "a case took " + r->route});
        break;
      }
    }
    return j;
  }
};

struct Ran {
  int rc;
  std::string out;
};

std::string temp_dir(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / ("nvh_driver_" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

Ran verify(const OperatorSuite& suite, VerifyOptions o) {
  std::ostringstream out;
  const int rc = run_verify(
      suite, [] { return make_host_backend(); }, o, out);
  return {rc, out.str()};
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

VerifyOptions options(const std::string& dir) {
  VerifyOptions o;
  o.random_cases = 6;
  o.seed = 0;
  o.out_dir = temp_dir(dir);
  return o;
}

TEST(VerifyDriver, RunsEveryCaseJudgesTheGateAndReportsAGroupItCannotRun) {
  const ToySuite suite;
  const VerifyOptions o = options("whole");
  const Ran r = verify(suite, o);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("  even: 8 cases (2 boundary, 6 random): OK 8, FAIL 0"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("gpu_only: SKIPPED: the toy's GPU group needs a GPU"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("route gate passed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("selfcheck: 1 check, OK"), std::string::npos) << r.out;
  VerifyOptions skipping = options("skipping");
  skipping.skip = {"selfcheck"};
  const Ran s = verify(suite, skipping);
  EXPECT_NE(s.out.find("selfcheck: skipped (--skip selfcheck)"), std::string::npos) << s.out;
  EXPECT_EQ(s.out.find("selfcheck: 1 check"), std::string::npos) << s.out;
  const Manifest m = read_manifest(o.out_dir + "/manifest.json");
  EXPECT_EQ(m.cases.at("odd/c13"), digest_of("c13"));
  EXPECT_EQ(m.cases.size(), 16u);
}

TEST(VerifyDriver, ACrashFailsItsCaseAloneAndTheSuitesJudgementFailsAGroup) {
  ToySuite suite;
  suite.crash_case = true;
  suite.wrong_route = true;
  const Ran r = verify(suite, options("crash"));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL odd/c13: crashed: SIGSEGV"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  odd: 8 cases (2 boundary, 6 random): OK 7, FAIL 1"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("FAIL even/route-targets: a case took b"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("route gate FAILED"), std::string::npos) << r.out;  // route a never ran
}

TEST(VerifyDriver, ACaseRerunsAloneAndAKeyTheSuiteRefusesIsAnError) {
  const ToySuite suite;
  VerifyOptions o = options("case");
  o.cases = {"odd/c13"};
  const Ran r = verify(suite, o);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("case odd/c13: OK, digest " + digest_of("c13")), std::string::npos) << r.out;
  o.cases = {"c13"};
  EXPECT_THROW(verify(suite, o), std::invalid_argument);
  o.cases = {"nosuch/c1"};
  EXPECT_THROW(verify(suite, o), std::invalid_argument);
}

// The whole run against one shard (its own folder) and three shards merged:
// the same manifest, gate file, launches and verdict, with the gate passed
// and with a group failure to agree on (wrong_route).
TEST(VerifyDriver, ShardsMergedEqualTheWholeRun) {
  for (bool wrong_route : {false, true}) {
    SCOPED_TRACE(wrong_route ? "a failing run" : "a passing run");
    ToySuite suite;
    suite.wrong_route = wrong_route;
    const std::string tag = wrong_route ? "_wrong" : "_right";
    const VerifyOptions whole = options("whole" + tag);
    const Ran w = verify(suite, whole);
    EXPECT_EQ(w.rc, wrong_route ? 1 : 0) << w.out;
    EXPECT_NE(w.out.find(wrong_route ? "route gate FAILED" : "route gate passed"),
              std::string::npos)
        << w.out;
    for (int n : {1, 3}) {
      SCOPED_TRACE(std::to_string(n) + " shards");
      std::vector<std::string> dirs;
      if (n == 1) dirs.push_back(whole.out_dir);  // one shard is the whole run: merge its folder
      for (int i = 0; n > 1 && i < n; ++i) {
        VerifyOptions s = options("shard" + std::to_string(i) + tag);
        s.shard = {i, n};
        const Ran part = verify(suite, s);
        EXPECT_EQ(part.rc, 0) << part.out;  // a shard judges no group claim
        dirs.push_back(s.out_dir);
      }
      MergeOptions m{temp_dir("merged" + std::to_string(n) + tag), dirs};
      std::ostringstream out;
      EXPECT_EQ(run_merge(suite, m, out), w.rc) << out.str();
      EXPECT_EQ(read_manifest(m.out_dir + "/manifest.json").cases,
                read_manifest(whole.out_dir + "/manifest.json").cases);
      EXPECT_EQ(file_text(m.out_dir + "/route_gate.json"),
                file_text(whole.out_dir + "/route_gate.json"));
      EXPECT_EQ(read_route_log(m.out_dir + "/routes.jsonl").size(),
                read_route_log(whole.out_dir + "/routes.jsonl").size());
      EXPECT_EQ(out.str().find("FAIL even/route-targets") != std::string::npos, wrong_route)
          << out.str();
      EXPECT_NE(out.str().find(wrong_route ? "route gate FAILED" : "route gate passed"),
                std::string::npos)
          << out.str();
    }
  }
}

}  // namespace
}  // namespace nvh
