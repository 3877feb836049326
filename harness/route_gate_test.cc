#include "harness/route_gate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvh {
namespace {

GateDeclaration declaration() {
  return {"op_x", {{"alpha", {"small", "tiny"}}, {"beta", {"big"}}, {"gamma", {"special"}}}, {}};
}

const HardwareGates kGammaGated = {{"gamma", "feature Z"}};

LaunchRecord rec(const std::string& route, const std::string& reason,
                 const std::string& family = "fam", const std::string& op = "op_x") {
  LaunchRecord r;
  r.op = op;
  r.route = route;
  r.reason = reason;
  r.family = family;
  return r;
}

// Every declared (route, reason) once, gamma gated and not run.
std::vector<LaunchRecord> complete() {
  return {rec("alpha", "small"), rec("alpha", "tiny"), rec("beta", "big")};
}

const RouteCoverage& route_of(const GateReport& report, const std::string& route) {
  for (const RouteCoverage& r : report.routes) {
    if (r.route == route) return r;
  }
  throw std::out_of_range("no route " + route);
}

// The message of the std::invalid_argument evaluate_gate throws, or "" if none.
std::string validation_error(const GateDeclaration& d, const HardwareGates& gates) {
  try {
    evaluate_gate(d, gates, {});
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(RouteGate, CompleteCoveragePasses) {
  const GateReport report = evaluate_gate(declaration(), kGammaGated, complete());
  EXPECT_TRUE(report.passed());
  EXPECT_TRUE(report.problems().empty());
  EXPECT_EQ(route_of(report, "alpha").status, Coverage::kExecuted);
  EXPECT_EQ(route_of(report, "alpha").executed, 2u);
  EXPECT_EQ(route_of(report, "beta").status, Coverage::kExecuted);
}

TEST(RouteGate, CountsPerReasonAndFamily) {
  std::vector<LaunchRecord> records = complete();
  records.push_back(rec("alpha", "small", "other"));
  records.push_back(rec("alpha", "small", ""));
  const GateReport report = evaluate_gate(declaration(), kGammaGated, records);
  EXPECT_EQ(report.families, std::vector<std::string>({"", "fam", "other"}));
  const RouteCoverage& alpha = route_of(report, "alpha");
  EXPECT_EQ(alpha.executed, 4u);
  EXPECT_EQ(alpha.by_family,
            (std::map<std::string, std::size_t>{{"", 1}, {"fam", 2}, {"other", 1}}));
  ASSERT_EQ(alpha.reasons.size(), 2u);
  EXPECT_EQ(alpha.reasons[0].reason, "small");
  EXPECT_EQ(alpha.reasons[0].executed, 3u);
  EXPECT_EQ(alpha.reasons[1].reason, "tiny");
  EXPECT_EQ(alpha.reasons[1].executed, 1u);
}

TEST(RouteGate, MissingRouteFails) {
  const GateReport report =
      evaluate_gate(declaration(), kGammaGated, {rec("alpha", "small"), rec("alpha", "tiny")});
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(route_of(report, "beta").status, Coverage::kMissing);
  EXPECT_EQ(report.problems(),
            std::vector<std::string>({"route \"beta\": MISSING, 0 launches",
                                      "route \"beta\" reason \"big\": MISSING, 0 launches"}));
}

TEST(RouteGate, MissingReasonFailsEvenIfRouteRan) {
  const GateReport report =
      evaluate_gate(declaration(), kGammaGated, {rec("alpha", "small"), rec("beta", "big")});
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(route_of(report, "alpha").status, Coverage::kExecuted);
  EXPECT_EQ(route_of(report, "alpha").reasons[1].status, Coverage::kMissing);
  EXPECT_EQ(report.problems(),
            std::vector<std::string>({"route \"alpha\" reason \"tiny\": MISSING, 0 launches"}));
}

TEST(RouteGate, GatedRouteThatDidNotRunIsSatisfiedAndNamesCapability) {
  const GateReport report = evaluate_gate(declaration(), kGammaGated, complete());
  const RouteCoverage& gamma = route_of(report, "gamma");
  EXPECT_EQ(gamma.status, Coverage::kHardwareGated);
  EXPECT_EQ(gamma.capability, "feature Z");
  EXPECT_EQ(gamma.reasons[0].status, Coverage::kHardwareGated);
}

TEST(RouteGate, UngatedRouteThatDidNotRunIsMissing) {
  const GateReport report = evaluate_gate(declaration(), {}, complete());
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(route_of(report, "gamma").status, Coverage::kMissing);
}

TEST(RouteGate, GatedRouteThatRanFails) {
  std::vector<LaunchRecord> records = complete();
  records.push_back(rec("gamma", "special"));
  const GateReport report = evaluate_gate(declaration(), kGammaGated, records);
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(route_of(report, "gamma").status, Coverage::kExecutedWhileGated);
  EXPECT_EQ(report.problems()[0],
            "route \"gamma\": EXECUTED-WHILE-GATED (machine lacks: feature Z), 1 launches");
}

TEST(RouteGate, UndeclaredRouteFails) {
  std::vector<LaunchRecord> records = complete();
  records.push_back(rec("zeta", "whim"));
  const GateReport report = evaluate_gate(declaration(), kGammaGated, records);
  EXPECT_FALSE(report.passed());
  ASSERT_EQ(report.routes.size(), 4u);
  EXPECT_EQ(report.routes[3].route, "zeta");
  EXPECT_EQ(report.routes[3].status, Coverage::kUndeclared);
  EXPECT_EQ(report.routes[3].reasons[0].status, Coverage::kUndeclared);
}

TEST(RouteGate, UndeclaredReasonOnDeclaredRouteFails) {
  std::vector<LaunchRecord> records = complete();
  records.push_back(rec("beta", "not claimed"));
  const GateReport report = evaluate_gate(declaration(), kGammaGated, records);
  EXPECT_FALSE(report.passed());
  const RouteCoverage& beta = route_of(report, "beta");
  ASSERT_EQ(beta.reasons.size(), 2u);
  EXPECT_EQ(beta.reasons[1].reason, "not claimed");
  EXPECT_EQ(beta.reasons[1].status, Coverage::kUndeclared);
  EXPECT_EQ(
      report.problems(),
      std::vector<std::string>({"route \"beta\" reason \"not claimed\": UNDECLARED, 1 launches"}));
}

TEST(RouteGate, OtherOperatorsRecordsAreNotJudged) {
  std::vector<LaunchRecord> records = complete();
  records.push_back(rec("zeta", "whim", "fam", "op_y"));
  const GateReport report = evaluate_gate(declaration(), kGammaGated, records);
  EXPECT_TRUE(report.passed());
  EXPECT_EQ(report.other_op_records, 1u);
  EXPECT_EQ(report.routes.size(), 3u);
}

TEST(RouteGate, RejectsInconsistentDeclarations) {
  GateDeclaration d = declaration();
  d.op = "";
  EXPECT_EQ(validation_error(d, {}), "evaluate_gate: declaration.op = \"\": must be non-empty");
  d = declaration();
  d.routes.clear();
  EXPECT_EQ(validation_error(d, {}),
            "evaluate_gate: declaration.routes = []: must declare a route");
  d = declaration();
  d.routes[2].route = "alpha";
  EXPECT_EQ(validation_error(d, {}),
            "evaluate_gate: declaration.routes[2].route = \"alpha\": declared twice");
  d = declaration();
  d.routes[1].route = "";
  EXPECT_EQ(validation_error(d, {}),
            "evaluate_gate: declaration.routes[1].route = \"\": must be non-empty");
  d = declaration();
  d.routes[1].reasons.clear();
  EXPECT_EQ(validation_error(d, {}),
            "evaluate_gate: declaration.routes[1].reasons = []: "
            "a route must claim at least one reason");
  d = declaration();
  d.routes[0].reasons = {"small", "small"};
  EXPECT_EQ(validation_error(d, {}),
            "evaluate_gate: declaration.routes[0].reasons[1] = \"small\": declared twice");
  d = declaration();
  d.routes[0].reasons = {""};
  EXPECT_EQ(validation_error(d, {}),
            "evaluate_gate: declaration.routes[0].reasons[0] = \"\": must be non-empty");
}

TEST(RouteGate, RejectsBadGates) {
  EXPECT_EQ(validation_error(declaration(), {{"omega", "x"}}),
            "evaluate_gate: gates[\"omega\"]: route is not declared");
  EXPECT_EQ(validation_error(declaration(), {{"gamma", ""}}),
            "evaluate_gate: gates[\"gamma\"] = \"\": the missing capability must be named");
}

TEST(RouteGate, TextRenderingIsPinned) {
  std::vector<LaunchRecord> records = {
      rec("alpha", "small", "decode"), rec("alpha", "small", "decode"),
      rec("alpha", "small", ""),       rec("alpha", "tiny", "prefill"),
      rec("zeta", "whim", "prefill"),  rec("beta", "big", "x", "op_y")};
  for (int i = 0; i < 10; ++i) records.push_back(rec("alpha", "tiny", "decode"));
  EXPECT_EQ(render_gate_text(evaluate_gate(declaration(), kGammaGated, records)),
            "route coverage for op \"op_x\": FAILED\n"
            "\n"
            "route  (none)  decode  prefill  total  status\n"
            "-----  ------  ------  -------  -----  -------------------------\n"
            "alpha       1      12        1     14  executed\n"
            "beta        0       0        0      0  MISSING\n"
            "gamma       0       0        0      0  hardware-gated: feature Z\n"
            "zeta        0       0        1      1  UNDECLARED\n"
            "\n"
            "reasons:\n"
            "  alpha\n"
            "    small     3  executed\n"
            "    tiny     11  executed\n"
            "  beta\n"
            "    big       0  MISSING\n"
            "  gamma\n"
            "    special   0  hardware-gated: feature Z\n"
            "  zeta\n"
            "    whim      1  UNDECLARED\n"
            "\n"
            "problems (4):\n"
            "  route \"beta\": MISSING, 0 launches\n"
            "  route \"beta\" reason \"big\": MISSING, 0 launches\n"
            "  route \"zeta\": UNDECLARED, 1 launches\n"
            "  route \"zeta\" reason \"whim\": UNDECLARED, 1 launches\n"
            "\n"
            "records of other operators, not judged: 1\n");
}

TEST(RouteGate, TextRenderingOfAPass) {
  EXPECT_EQ(render_gate_text(evaluate_gate(declaration(), kGammaGated, complete())),
            "route coverage for op \"op_x\": passed\n"
            "\n"
            "route  fam  total  status\n"
            "-----  ---  -----  -------------------------\n"
            "alpha    2      2  executed\n"
            "beta     1      1  executed\n"
            "gamma    0      0  hardware-gated: feature Z\n"
            "\n"
            "reasons:\n"
            "  alpha\n"
            "    small    1  executed\n"
            "    tiny     1  executed\n"
            "  beta\n"
            "    big      1  executed\n"
            "  gamma\n"
            "    special  0  hardware-gated: feature Z\n");
}

// A run of some families: the same table, but nothing it did not reach is
// called MISSING and nothing says FAILED; what no filter excuses still shows.
TEST(RouteGate, TextRenderingOfARunNotJudged) {
  const std::vector<LaunchRecord> records = {rec("alpha", "small", "decode"),
                                             rec("zeta", "whim", "decode")};
  EXPECT_EQ(render_gate_text(evaluate_gate(declaration(), kGammaGated, records),
                             "--family selects 1 of 3 families"),
            "route coverage for op \"op_x\": gate not judged: --family selects 1 of 3 families\n"
            "\n"
            "route  decode  total  status\n"
            "-----  ------  -----  -------------------------\n"
            "alpha       1      1  executed\n"
            "beta        0      0  not reached\n"
            "gamma       0      0  hardware-gated: feature Z\n"
            "zeta        1      1  UNDECLARED\n"
            "\n"
            "reasons:\n"
            "  alpha\n"
            "    small    1  executed\n"
            "    tiny     0  not reached\n"
            "  beta\n"
            "    big      0  not reached\n"
            "  gamma\n"
            "    special  0  hardware-gated: feature Z\n"
            "  zeta\n"
            "    whim     1  UNDECLARED\n");
  const nlohmann::json j = nlohmann::json::parse(render_gate_json(
      evaluate_gate(declaration(), kGammaGated, records), "--family selects 1 of 3 families"));
  EXPECT_TRUE(j["passed"].is_null());
  EXPECT_EQ(j["not_judged_why"], "--family selects 1 of 3 families");
}

TEST(RouteGateFamilies, ARunNotJudgedSaysNotReachedForAFamily) {
  GateDeclaration d{"op", {{"fast", {"ok"}}}, {{"alpha", {"fast"}}, {"beta", {"fast"}}}};
  LaunchRecord r;
  r.op = "op";
  r.route = "fast";
  r.reason = "ok";
  r.family = "alpha";
  const std::string text = render_gate_text(evaluate_gate(d, {}, {r}), "a filter");
  EXPECT_NE(text.find("  beta: 0 launches on fast  not reached\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("MISSING"), std::string::npos) << text;
}

TEST(RouteGate, JsonRenderingCarriesTheTable) {
  std::vector<LaunchRecord> records = complete();
  records.push_back(rec("alpha", "small", "other"));
  records.push_back(rec("beta", "huge", "other"));
  const nlohmann::json j =
      nlohmann::json::parse(render_gate_json(evaluate_gate(declaration(), kGammaGated, records)));
  EXPECT_EQ(j["op"], "op_x");
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["families"], nlohmann::json({"fam", "other"}));
  ASSERT_EQ(j["routes"].size(), 3u);
  EXPECT_EQ(j["routes"][0], nlohmann::json::parse(R"({
    "route": "alpha", "status": "executed", "executed": 3,
    "by_family": {"fam": 2, "other": 1},
    "reasons": [{"reason": "small", "status": "executed", "executed": 2},
                {"reason": "tiny", "status": "executed", "executed": 1}]})"));
  EXPECT_EQ(j["routes"][1]["reasons"][1],
            nlohmann::json::parse(R"({"reason": "huge", "status": "UNDECLARED", "executed": 1})"));
  EXPECT_EQ(j["routes"][2], nlohmann::json::parse(R"({
    "route": "gamma", "status": "hardware-gated", "capability": "feature Z", "executed": 0,
    "by_family": {"fam": 0, "other": 0},
    "reasons": [{"reason": "special", "status": "hardware-gated", "executed": 0}]})"));
  EXPECT_EQ(j["problems"],
            nlohmann::json({"route \"beta\" reason \"huge\": UNDECLARED, 1 launches"}));
  EXPECT_EQ(j["other_op_records"], 0);
}

TEST(RouteGate, JsonPassedIsTrueForCompleteCoverage) {
  const nlohmann::json j = nlohmann::json::parse(
      render_gate_json(evaluate_gate(declaration(), kGammaGated, complete())));
  EXPECT_EQ(j["passed"], true);
  EXPECT_EQ(j["problems"], nlohmann::json::array());
}

TEST(Coverage, StatusNames) {
  EXPECT_EQ(to_string(Coverage::kExecuted), "executed");
  EXPECT_EQ(to_string(Coverage::kHardwareGated), "hardware-gated");
  EXPECT_EQ(to_string(Coverage::kMissing), "MISSING");
  EXPECT_EQ(to_string(Coverage::kExecutedWhileGated), "EXECUTED-WHILE-GATED");
  EXPECT_EQ(to_string(Coverage::kUndeclared), "UNDECLARED");
}

}  // namespace
}  // namespace nvh

namespace nvh {
namespace {

GateDeclaration with_families() {
  GateDeclaration d{"op",
                    {{"fast", {"ok"}}, {"slow", {"ok"}}},
                    {{"alpha", {"fast"}}, {"beta", {"slow", "fast"}}}};
  return d;
}

LaunchRecord launch(const std::string& route, const std::string& family) {
  LaunchRecord r;
  r.op = "op";
  r.route = route;
  r.reason = "ok";
  r.family = family;
  return r;
}

TEST(RouteGateFamilies, EveryDeclaredFamilyMustReachOneOfItsRoutes) {
  const std::vector<LaunchRecord> all = {launch("fast", "alpha"), launch("slow", "beta")};
  EXPECT_TRUE(evaluate_gate(with_families(), {}, all).passed());
  // Without beta's launches every route and reason still ran (alpha took
  // both), so only the family requirement can fail.
  const std::vector<LaunchRecord> no_beta = {launch("fast", "alpha"), launch("slow", "alpha")};
  const GateReport r = evaluate_gate(with_families(), {}, no_beta);
  EXPECT_FALSE(r.passed());
  ASSERT_EQ(r.problems().size(), 1u);
  EXPECT_EQ(r.problems()[0], "family \"beta\": MISSING, no launch on its routes (slow, fast)");
  EXPECT_NE(render_gate_text(r).find("beta: 0 launches on slow, fast  MISSING"), std::string::npos);
}

TEST(RouteGateFamilies, AFamilyOffItsRoutesDoesNotCount) {
  const std::vector<LaunchRecord> off = {launch("fast", "alpha"), launch("slow", "alpha"),
                                         launch("slow", "gamma")};
  GateDeclaration d = with_families();
  d.families = {{"gamma", {"fast"}}};
  EXPECT_FALSE(evaluate_gate(d, {}, off).passed());
}

TEST(RouteGateFamilies, DeclarationsAreChecked) {
  GateDeclaration d = with_families();
  d.families.push_back({"", {"fast"}});
  EXPECT_THROW(evaluate_gate(d, {}, {}), std::invalid_argument);
  d.families.back() = {"delta", {}};
  EXPECT_THROW(evaluate_gate(d, {}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace nvh
