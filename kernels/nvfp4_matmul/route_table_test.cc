#include "kernels/nvfp4_matmul/route_table.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/nvfp4_matmul/dispatch.h"
#include "kernels/nvfp4_matmul/prefill_fused_plan.h"

namespace nvfp4 {
namespace {

TEST(RouteTable, HoldsOneRowPerRouteInTheEnumsOrder) {
  std::set<std::string> names;
  std::size_t i = 0;
  for (const RouteRow& row : route_table()) {
    EXPECT_EQ(static_cast<std::size_t>(row.route), i++) << row.name;
    EXPECT_EQ(&route_row(row.route), &row) << row.name;
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " is named twice";
    EXPECT_EQ(parse_route(row.name), row.route) << row.name;
    EXPECT_STREQ(route_name(row.route), row.name);
  }
  EXPECT_EQ(i, kRouteCount);
  EXPECT_EQ(kAllRoutes.size(), kRouteCount);
  try {
    route_row(Route::count_);
    FAIL() << "route_row(Route::count_) should throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "route_row: route = " + std::to_string(kRouteCount) + ": no route has this value");
  }
}

TEST(RouteTable, ReasonCodesAreTheDeclaredOnes) {
  // The gate and `routes` read these; the route log carries them. A change
  // here is a change of the route log's vocabulary: DESIGN.md's table and
  // properties/nvfp4_matmul/route_oracle.cc must follow.
  const std::map<Route, std::vector<std::string>> expected = {
      {Route::empty, {"m_zero", "n_zero", "k_zero"}},
      {Route::gemv_mma, {"decode_mma"}},
      {Route::gemv_scalar, {"decode_k_not_multiple_of_128", "decode_sm_below_80"}},
      {Route::native_sm120, {"native_opted_in"}},
      {Route::prefill_fused, {"fused_mma"}},
      {Route::prefill_vec8,
       {"fused_block_size_not_16", "fused_unaligned", "fused_k_not_multiple_of_128",
        "fused_sm_below_80", "fused_m_above_crossover"}},
      {Route::prefill_scalar, {"odd_block_size", "k_not_multiple_of_8", "unaligned"}},
  };
  for (const RouteRow& row : route_table()) {
    EXPECT_EQ(reasons_of(row), expected.at(row.route)) << row.name;
    EXPECT_EQ(route_reasons(row.route), expected.at(row.route)) << row.name;
  }
}

// `nvfp4-harness routes`: per route the line "name: reasons" (the listing's
// form before the table), then its needs and flags.
TEST(RouteTable, ListingNamesEveryRouteItsReasonsAndNeeds) {
  const std::string text = route_table_text();
  std::size_t at = 0;
  for (const RouteRow& row : route_table()) {
    std::string line = std::string(row.name) + ":";
    for (const std::string& reason : reasons_of(row)) line += " " + reason;
    std::string needs = "\n  needs: ";
    for (const RoutePredicate* need : row.needs)
      needs += std::string(need == *row.needs.begin() ? "" : "; ") + need->statement;
    const std::size_t found = text.find(line + needs + "\n", at);
    ASSERT_NE(found, std::string::npos) << row.name << " in\n" << text;
    EXPECT_EQ(found == 0 || text[found - 1] == '\n', true) << text;
    at = found + line.size();
  }
  EXPECT_NE(
      text.find("native_sm120: native_opted_in\n  needs: M > 0; N > 0; K > 0; sm 12.x; "
                "block-scaled FP4 matmul available; block_size == 16; K % 32 == 0; N % 32 == 0\n"
                "  opt-in; hardware-gated where the device lacks it\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "prefill_fused: fused_mma\n  needs: M > 0; N > 0; K > 0; block_size == 16; "
          "A and B 16-byte, weight_scale 4-byte aligned; K % 128 == 0; sm >= 80\n"
          "  taken (not forced) only where: M <= 16, or M <= 32 with N x K >= 2^20, or M <= 64 "
          "(128 with wgmma) with N x K >= 2^23, or M <= 256 with wgmma and N x K >= 2^24, or "
          "448 <= M <= 512 with wgmma and the plan's blocks filling their rounds to 80 % in "
          "K slices of 4096 or more, or M = 768 or 1024 with wgmma and the plan's blocks filling "
          "their rounds to 90 % in K slices of 4096 or more\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("prefill_scalar: odd_block_size k_not_multiple_of_8 unaligned\n  needs: M > "
                      "0; N > 0; K > 0\n"
                      "  dequantizes into a scratch, then a GEMM; forced onto every exact case it "
                      "accepts (reason "
                      "forced)\n"),
            std::string::npos)
      << text;
}

// Each row's flags as DESIGN.md states them: opt-in (native_sm120 only),
// which routes dequantize into a scratch, which are hardware-gated, and
// which the property suites force for the cross-route check.
TEST(RouteTable, FlagsAreDesignMdsTable) {
  struct Flags {
    bool opt_in, needs_scratch, gated, cross_checked;
    const char* variant;  // at N = 64
  };
  const std::map<Route, Flags> expected = {
      {Route::empty, {false, false, false, false, "fill"}},
      {Route::gemv_mma, {false, false, false, true, "m16n8k16"}},
      {Route::gemv_scalar, {false, false, false, true, "rows4"}},
      {Route::native_sm120, {true, false, true, false, "cublaslt_block_scaled_fp4"}},
      {Route::prefill_fused, {false, false, false, true, "m16n64"}},
      {Route::prefill_vec8, {false, true, false, true, "vec8"}},
      {Route::prefill_scalar, {false, true, false, true, "scalar"}},
  };
  Problem p;
  p.N = 64;
  for (const RouteRow& row : route_table()) {
    const Flags& f = expected.at(row.route);
    EXPECT_EQ(row.opt_in, f.opt_in) << row.name;
    EXPECT_EQ(row.needs_scratch, f.needs_scratch) << row.name;
    EXPECT_EQ(row.missing_capability != nullptr, f.gated) << row.name;
    EXPECT_EQ(row.cross_checked, f.cross_checked) << row.name;
    EXPECT_STREQ(row.variant(p, Caps{}), f.variant) << row.name;
  }
}

// What each predicate's statement means, written here from the words alone:
// the table's `holds` must compute exactly this, and its text must name these
// values.
struct Meaning {
  std::function<bool(const Problem&, const Caps&)> holds;
  std::function<std::string(const Problem&, const Caps&)> values;  // "" when the text names none
};

int64_t variable(const std::string& name, const Problem& p, const Caps& caps) {
  if (name == "M") return p.M;
  if (name == "N") return p.N;
  if (name == "K") return p.K;
  if (name == "block_size") return p.block_size;
  if (name == "sm") return caps.sm;
  throw std::invalid_argument("no variable " + name);
}

// "X % n == 0", "X <= n", "X >= n", "X > n", "X == n" over M, N, K, block_size, sm.
bool comparison_meaning(const std::string& statement, Meaning* out) {
  static const std::regex form(R"(^(M|N|K|block_size|sm) (% (\d+) == 0|(<=|>=|>|==) (\d+))$)");
  std::smatch m;
  if (!std::regex_match(statement, m, form)) return false;
  const std::string var = m[1];
  const bool modulo = m[3].matched;
  const int64_t n = std::stoll(modulo ? m[3].str() : m[5].str());
  const std::string op = m[4];
  out->holds = [=](const Problem& p, const Caps& c) {
    const int64_t x = variable(var, p, c);
    if (modulo) return x % n == 0;
    if (op == "<=") return x <= n;
    if (op == ">=") return x >= n;
    if (op == ">") return x > n;
    return x == n;
  };
  out->values = [=](const Problem& p, const Caps& c) {
    return var + " = " + std::to_string(variable(var, p, c));
  };
  return true;
}

std::string s(uint32_t v) { return std::to_string(v); }

Meaning write_meaning(const std::string& statement) {
  Meaning m;
  if (comparison_meaning(statement, &m)) return m;
  static const std::map<std::string, Meaning> worded = {
      {"M, N or K == 0",
       {[](const Problem& p, const Caps&) { return p.M == 0 || p.N == 0 || p.K == 0; },
        [](const Problem& p, const Caps&) {
          return "M = " + std::to_string(p.M) + ", N = " + std::to_string(p.N) +
                 ", K = " + std::to_string(p.K);
        }}},
      {"A and B 16-byte, weight_scale 4-byte aligned",
       {[](const Problem& p, const Caps&) {
          return p.a_address_mod16 % 16 == 0 && p.b_address_mod16 % 16 == 0 &&
                 p.scales_address_mod4 % 4 == 0;
        },
        [](const Problem& p, const Caps&) {
          return "A % 16 = " + s(p.a_address_mod16) + ", B % 16 = " + s(p.b_address_mod16) +
                 ", weight_scale % 4 = " + s(p.scales_address_mod4);
        }}},
      {"sm 12.x",
       {[](const Problem&, const Caps& c) { return c.sm / 10 == 12; },
        [](const Problem&, const Caps& c) { return "sm = " + std::to_string(c.sm); }}},
      {"block-scaled FP4 matmul available",
       {[](const Problem&, const Caps& c) { return c.native_fp4; },
        [](const Problem&, const Caps&) { return ""; }}},
      {"M <= 16, or M <= 32 with N x K >= 2^20, or M <= 64 (128 with wgmma) with N x K >= 2^23, "
       "or M <= 256 with wgmma and N x K >= 2^24, or 448 <= M <= 512 with wgmma and the plan's "
       "blocks filling their rounds to 80 % in K slices of 4096 or more, or M = 768 or 1024 with "
       "wgmma and the plan's blocks filling their rounds to 90 % in K slices of 4096 or more",
       {[](const Problem& p, const Caps& c) {
          // Exact in a double for every N and K here (products under 2^53).
          const double w = static_cast<double>(p.N) * static_cast<double>(p.K);
          return p.M <= 16 || (p.M <= 32 && w >= 1048576.0) || (p.M <= 64 && w >= 8388608.0) ||
                 (c.wgmma && p.M <= 128 && w >= 8388608.0) ||
                 (c.wgmma && p.M <= 256 && w >= 16777216.0) ||
                 (c.wgmma && p.M >= 448 && p.M <= 512 &&
                  prefill_fused_fills_its_rounds(prefill_fused_plan(p.M, p.N, p.K, true), p.M, p.N,
                                                 p.K)) ||
                 (c.wgmma && (p.M == 768 || p.M == 1024) &&
                  prefill_fused_fills_its_rounds(prefill_fused_plan(p.M, p.N, p.K, true), p.M, p.N,
                                                 p.K, 90));
        },
        [](const Problem& p, const Caps& c) {
          std::string s = "M = " + std::to_string(p.M) + ", N = " + std::to_string(p.N) +
                          ", K = " + std::to_string(p.K) + (c.wgmma ? ", wgmma" : ", no wgmma");
          if (p.N > 0 && p.K > 0) s += ", N x K = " + std::to_string(p.N * p.K);
          if (!c.wgmma || ((p.M < 448 || p.M > 512) && p.M != 768 && p.M != 1024)) return s;
          const FusedPlan plan = prefill_fused_plan(p.M, p.N, p.K, true);
          const FusedRounds r = prefill_fused_rounds(plan, p.M, p.N, p.K);
          if (r.rounds == 0) return s;
          return s + ", plan " + prefill_fused_variant_name(plan) + ": " +
                 std::to_string(r.blocks) + " blocks in " + std::to_string(r.rounds) + " x " +
                 std::to_string(r.slots) + " slots (" +
                 std::to_string(100 * r.blocks / (r.rounds * r.slots)) + " %), K slices of " +
                 std::to_string(r.k_per_slice);
        }}},
      {"block_size even",
       {[](const Problem& p, const Caps&) { return p.block_size % 2 == 0; },
        [](const Problem& p, const Caps&) {
          return "block_size = " + std::to_string(p.block_size);
        }}},
      {"B 4-byte and scratch 16-byte aligned",
       {[](const Problem& p, const Caps&) {
          return p.b_address_mod16 % 4 == 0 && p.scratch_address_mod16 % 16 == 0;
        },
        [](const Problem& p, const Caps&) {
          return "B % 4 = " + s(p.b_address_mod16 % 4) +
                 ", scratch % 16 = " + s(p.scratch_address_mod16);
        }}},
  };
  const auto it = worded.find(statement);
  if (it == worded.end())
    throw std::invalid_argument("no meaning written for \"" + statement + "\"");
  return it->second;
}

// Each statement's meaning, written once (the regex is slow to run per call).
const Meaning& meaning_of(const std::string& statement) {
  static std::map<std::string, Meaning> cache;
  auto it = cache.find(statement);
  if (it == cache.end()) it = cache.emplace(statement, write_meaning(statement)).first;
  return it->second;
}

// "K % 128 == 0 (K = 96)", from the meaning's values.
std::string expected_text(const RoutePredicate& pred, const Problem& p, const Caps& caps) {
  const std::string values = meaning_of(pred.statement).values(p, caps);
  return values.empty() ? std::string(pred.statement)
                        : std::string(pred.statement) + " (" + values + ")";
}

// The first predicate of `list` that fails by its meaning (not by `holds`).
const RoutePredicate* first_failing_by_meaning(const PredicateList& list, const Problem& p,
                                               const Caps& caps) {
  for (const RoutePredicate* pred : list) {
    if (!meaning_of(pred->statement).holds(p, caps)) return pred;
  }
  return nullptr;
}

std::vector<std::string> split_clauses(const std::string& detail) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t at = detail.find("; "); at != std::string::npos; at = detail.find("; ", start)) {
    out.push_back(detail.substr(start, at - start));
    start = at + 2;
  }
  out.push_back(detail.substr(start));
  return out;
}

// The needs (and, for the chain's choice, the prefers) with their values.
std::string needs_text(const RouteRow& row, const Problem& p, const Caps& caps,
                       bool with_prefers = false) {
  std::string out;
  std::size_t count = row.needs.size;
  for (const RoutePredicate* need : row.needs)
    out += (out.empty() ? "" : ", ") + expected_text(*need, p, caps);
  if (with_prefers) {
    for (const RoutePredicate* pref : row.prefers) out += ", " + expected_text(*pref, p, caps);
    count += row.prefers.size;
  }
  return out + (count == 1 ? " holds" : " hold");
}

Caps device(int sm, bool native_fp4, bool wgmma = false) {
  Caps c;
  c.sm = sm;
  c.native_fp4 = native_fp4;
  c.wgmma = wgmma;
  c.backend = "cuda";
  return c;
}

// Problems around every predicate's edge, on devices around every capability edge.
std::vector<Problem> problems() {
  std::vector<Problem> out;
  for (int64_t M :
       {int64_t{0}, int64_t{1}, int64_t{8}, int64_t{9}, int64_t{16}, int64_t{17}, kFusedMaxM,
        kFusedMaxM + 1, kFusedMaxMWgmma, kFusedMaxMWgmma + 1, kFusedTwoBlocksMinM - 1,
        kFusedTwoBlocksMinM, kFusedTwoBlocksMaxM, kFusedTwoBlocksMaxM + 1})
    // 792 tiles of 128 rows: at M = 448..512 two blocks over M fill 12 whole
    // rounds of 132, in K slices of 4096 values from K = 4096 on; the small
    // N split K into slices below 4096 or leave rounds nearly empty.
    for (int64_t N : {int64_t{0}, int64_t{48}, int64_t{64}, int64_t{792} * 128})
      for (int64_t K : {0, 40, 48, 64, 96, 128, 256, 260, 4096, 8192})
        for (int64_t bs : {15, 16, 32})
          for (uint32_t a : {0u, 2u})
            for (uint32_t b : {0u, 2u, 4u})
              for (uint32_t scratch : {0u, 8u})
                for (uint32_t scales : {0u, 1u}) {
                  Problem p;
                  p.M = M;
                  p.N = N;
                  p.K = K;
                  p.block_size = bs;
                  p.a_address_mod16 = a;
                  p.b_address_mod16 = b;
                  p.scratch_address_mod16 = scratch;
                  p.scales_address_mod4 = scales;
                  out.push_back(p);
                }
  // The bands of weights (kFusedBands): each band's end and the M past it,
  // on N x K at 2^20, 2^23 and 2^24 (K = 128: N = 8192, 65536, 131072) and
  // one row of W under each, aligned, block_size 16.
  for (int64_t M : {16, 17, 32, 33, 64, 65, 128, 129, 256, 257})
    for (int64_t N : {8191, 8192, 65535, 65536, 131071, 131072})
      for (int64_t K : {128, 256}) {
        Problem p;
        p.M = M;
        p.N = N;
        p.K = K;
        p.block_size = 16;
        out.push_back(p);
      }
  // Three and four whole blocks over M (kFusedFullBlocksMinM, MaxM): each M,
  // one either side, and 640 and 896 between; N of 116, 117 and 120 tiles'
  // blocks at M = 1024 and 768 (87.9, 88.6 and 90.9 % of 132 slots) and K
  // whole below, at and above 4096.
  for (int64_t M : {640, 767, 768, 769, 896, 1023, 1024, 1025})
    for (int64_t N : {3712, 3840, 4992, 5120})
      for (int64_t K : {3968, 4096, 5120}) {
        Problem p;
        p.M = M;
        p.N = N;
        p.K = K;
        p.block_size = 16;
        out.push_back(p);
      }
  return out;
}

const std::vector<Caps>& devices() {
  static const std::vector<Caps> all = {
      device(75, false),       device(79, false), device(80, false), device(90, false),
      device(90, false, true), device(100, true), device(119, true), device(120, false),
      device(120, true),       device(129, true), device(130, true)};
  return all;
}

// Every predicate of every row computes what its statement says, and its text
// names the values it saw.
TEST(RouteTable, EveryPredicateComputesWhatItsTextSays) {
  for (const Problem& p : problems()) {
    for (const Caps& caps : devices()) {
      for (const RouteRow& row : route_table()) {
        std::vector<const RoutePredicate*> all(row.needs.begin(), row.needs.end());
        all.insert(all.end(), row.prefers.begin(), row.prefers.end());
        for (const RoutePredicate* pred : all) {
          const Meaning& m = meaning_of(pred->statement);
          ASSERT_EQ(pred->holds(p, caps), m.holds(p, caps))
              << row.name << ": \"" << pred->statement << "\" at " << expected_text(*pred, p, caps);
          ASSERT_EQ(pred->text(p, caps), expected_text(*pred, p, caps)) << row.name;
        }
      }
    }
  }
}

// The explanation walks the table: one clause per row tried, naming the
// predicate that passed it over, then the row taken with the reason code and
// (for a stand-in route) the failing predicate that code belongs to. And
// every declared reason is reached.
TEST(RouteTable, EveryRowsPredicatesAndReasonCodesAgreeWithTheExplanation) {
  std::set<std::pair<Route, std::string>> reached;
  for (const Problem& p : problems()) {
    for (const Caps& caps : devices()) {
      for (bool opt_in : {false, true}) {
        Options o;
        o.native_opt_in = opt_in;
        const RouteChoice c = select_route(p, caps, o);
        const Decision d = explain_route(p, caps, o);
        ASSERT_EQ(d.route, c.route) << d.detail;
        ASSERT_EQ(d.reason, c.reason) << d.detail;
        reached.insert({c.route, std::string(c.reason)});

        const std::vector<std::string> clauses = split_clauses(d.detail);
        std::size_t i = 0;
        for (const RouteRow& row : route_table()) {
          ASSERT_LT(i, clauses.size()) << d.detail;
          const std::string& clause = clauses[i++];
          if (row.opt_in && !opt_in) {
            ASSERT_EQ(clause, std::string(row.name) + " not opted in") << d.detail;
            continue;
          }
          const RoutePredicate* failing = first_failing_by_meaning(row.needs, p, caps);
          if (!failing) failing = first_failing_by_meaning(row.prefers, p, caps);
          if (failing) {
            ASSERT_NE(row.route, c.route) << d.detail;
            ASSERT_EQ(clause, std::string(row.name) +
                                  (row.opt_in ? " opted in but passed over: " : " passed over: ") +
                                  expected_text(*failing, p, caps) + " fails");
            continue;
          }
          // The first row whose needs and prefers all hold is the one taken.
          ASSERT_EQ(row.route, c.route) << d.detail;
          std::string why = std::string(row.name) + " taken for " + std::string(c.reason);
          if (row.taken_for) {
            ASSERT_EQ(c.reason, row.taken_for) << d.detail;
          } else {
            const RoutePredicate* decided = first_failing_by_meaning(row.passed_over, p, caps);
            ASSERT_NE(decided, nullptr) << d.detail;
            ASSERT_NE(decided->miss, nullptr) << decided->statement;
            ASSERT_EQ(c.reason, decided->miss) << d.detail;
            why += " (" + expected_text(*decided, p, caps) + " fails)";
          }
          ASSERT_EQ(clause, why + ": " + needs_text(row, p, caps, true));
          break;
        }
        ASSERT_EQ(i, clauses.size()) << d.detail;
      }
    }
  }
  for (const RouteRow& row : route_table()) {
    for (const std::string& reason : reasons_of(row)) {
      EXPECT_TRUE(reached.count({row.route, reason}))
          << row.name << " was never taken for " << reason;
    }
  }
}

TEST(RouteTable, AForcedRouteIsExplainedByItsNeedsOrRefusedNamingTheFirstThatFails) {
  const Caps caps = device(90, false);
  for (const Problem& p : problems()) {
    for (const RouteRow& row : route_table()) {
      Options o;
      o.force_route = row.route;
      const RoutePredicate* failing = first_failing_by_meaning(row.needs, p, caps);
      if (!failing) {
        const Decision d = explain_route(p, caps, o);
        ASSERT_EQ(d.route, row.route);
        ASSERT_EQ(d.reason, kForcedReason);
        ASSERT_EQ(d.detail, "forced to " + std::string(row.name) + ": " + needs_text(row, p, caps));
        continue;
      }
      try {
        select_route(p, caps, o);
        FAIL() << "forcing " << row.name << " should be refused at "
               << expected_text(*failing, p, caps);
      } catch (const std::invalid_argument& e) {
        ASSERT_EQ(std::string(e.what()), "select_route: force_route = " + std::string(row.name) +
                                             " refused: " + expected_text(*failing, p, caps) +
                                             " fails");
      }
      ASSERT_EQ(route_precondition_failure(row.route, p, caps),
                expected_text(*failing, p, caps) + " fails");
    }
  }
}

}  // namespace
}  // namespace nvfp4
