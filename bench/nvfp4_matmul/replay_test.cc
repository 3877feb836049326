#include "bench/nvfp4_matmul/replay.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "bench/nvfp4_matmul/fill_random.cuh"
#include "bench/nvfp4_matmul/shipped_manifests.h"
#include "harness/gpu_timing.h"
#include "harness/launch.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"

namespace nvfp4 {
namespace {

// The shipped manifest as built (shipped_manifests.h), not read from the source tree.
ReplayManifest shipped_manifest() {
  const std::string path = "bench/nvfp4_matmul/manifests/qwen_like_prefill.json";
  for (std::size_t i = 0; i < kShippedManifestsCount; ++i) {
    if (kShippedManifests[i].path == path)
      return parse_replay_manifest(kShippedManifests[i].text, path);
  }
  throw std::logic_error(path + " was not embedded");
}

Caps h200() { return h200_caps("cuda"); }

// The message parse_replay_manifest throws for `text`, or "" when it accepts it.
std::string parse_error(const std::string& text) {
  try {
    parse_replay_manifest(text, "m.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string with_node(const std::string& node_fields) {
  return R"({"name": "t", "nodes": [{"name": "a", "N": 64, "K": 128)" + node_fields + "}]}";
}

// ---- the shipped manifest -------------------------------------------------

TEST(ReplayManifest, ShippedModelHas168NodesAndAbout15BillionValues) {
  const ReplayManifest m = shipped_manifest();
  EXPECT_EQ(m.node_count(), 168);
  // The seed: "168 MatMulBlockQuantizedFp4Weight nodes ... 14.97 billion values".
  EXPECT_NEAR(static_cast<double>(m.weight_values()), 14.97e9, 0.01 * 14.97e9);
  EXPECT_EQ(m.dtype, DType::bf16);
  for (const ReplayNode& n : m.nodes) {
    EXPECT_EQ(n.K % 8, 0) << n.name;
    EXPECT_EQ(n.block_size, 16) << n.name;
  }
  ASSERT_TRUE(m.published.has_value());
  EXPECT_EQ(m.published->dequant_ms.at("prefill_scalar"), 1750);
  EXPECT_EQ(m.published->dequant_ms.at("prefill_vec8"), 409);
}

// As the H200 ran it (results/h200-s1207h200-replay-new-1.json: "routes":
// {"prefill_fused": {"calls": 5376}}): every chunk of 256 rows on the fused
// route, one timed step a call. (Caps without wgmma, as these tests and
// replay --dry-run had before 2026-12-07, planned prefill_vec8 throughout.)
TEST(ReplayManifest, ShippedModelTakesPrefillFusedNaturallyForAn8KPromptInChunksOf256) {
  const ReplayManifest m = shipped_manifest();
  const ReplayPlan plan = plan_replay(m, {8192, 256, ReplayRoute::natural}, h200());
  EXPECT_EQ(plan.rows.size(), 32u);
  EXPECT_EQ(plan.calls, 168 * 32);
  EXPECT_EQ(plan.steps, 168 * 32);
  for (const auto& chunk : plan.route) {
    for (Route r : chunk) EXPECT_EQ(r, Route::prefill_fused);
  }
  // Packed codes (half a byte a value, twice: the contract's order and
  // prepacked, every K being a multiple of 128) + scales (a byte per 16) +
  // qkv bias; once without the prepack, and once where prefill_vec8 is forced.
  const double values = static_cast<double>(m.weight_values());
  EXPECT_NEAR(static_cast<double>(plan.weight_bytes), values + values / 16, 1e6);
  ReplayOptions contract_order{8192, 256, ReplayRoute::natural};
  contract_order.prepack = false;
  EXPECT_NEAR(static_cast<double>(plan_replay(m, contract_order, h200()).weight_bytes),
              values / 2 + values / 16, 1e6);
  EXPECT_NEAR(static_cast<double>(
                  plan_replay(m, {8192, 256, ReplayRoute::prefill_vec8}, h200()).weight_bytes),
              values / 2 + values / 16, 1e6);
  EXPECT_EQ(plan.scratch_bytes, std::size_t{36864} * 5120 * 2);  // gate_up_proj is the largest node
  EXPECT_LT(plan.total_bytes(), std::size_t{20} << 30);          // an H100's 80 GB four times over
}

// ---- parser errors ----------------------------------------------------------

TEST(ReplayManifest, AcceptsAMinimalManifestWithDefaults) {
  const ReplayManifest m = parse_replay_manifest(with_node(""), "m.json");
  EXPECT_EQ(m.name, "t");
  EXPECT_EQ(m.dtype, DType::bf16);
  EXPECT_EQ(m.repeat, 1);
  ASSERT_EQ(m.nodes.size(), 1u);
  EXPECT_EQ(m.nodes[0].block_size, 16);
  EXPECT_EQ(m.nodes[0].count, 1);
  EXPECT_FALSE(m.nodes[0].bias);
  EXPECT_EQ(m.weight_values(), 64 * 128);
  EXPECT_FALSE(m.published.has_value());
}

TEST(ReplayManifest, CountsRepeatAndCount) {
  const ReplayManifest m = parse_replay_manifest(
      R"({"name": "t", "dtype": "fp16", "repeat": 3, "nodes": [{"name": "a", "N": 64, "K": 128, "count": 2},
                                                               {"name": "b", "N": 32, "K": 16, "bias": true}]})",
      "m.json");
  EXPECT_EQ(m.dtype, DType::fp16);
  EXPECT_EQ(m.node_count(), 3 * (2 + 1));
  EXPECT_EQ(m.weight_values(), 3 * (2 * 64 * 128 + 32 * 16));
}

TEST(ReplayManifest, ErrorsNameTheFileTheFieldAndTheValue) {
  EXPECT_EQ(parse_error(with_node(R"(, "bias": 1)")),
            "replay manifest m.json: nodes[0] (\"a\").bias = 1: must be true or false");
  EXPECT_EQ(parse_error(R"({"name": "t", "nodes": [{"name": "a", "N": 64, "K": 0}]})"),
            "replay manifest m.json: nodes[0] (\"a\").K = 0: must be positive");
  EXPECT_EQ(parse_error(R"({"name": "t", "nodes": [{"name": "a", "N": 64.5, "K": 8}]})"),
            "replay manifest m.json: nodes[0] (\"a\").N = 64.5: must be an integer");
  EXPECT_EQ(parse_error(R"({"name": "t", "nodes": [{"name": "a", "N": "64", "K": 8}]})"),
            "replay manifest m.json: nodes[0] (\"a\").N = \"64\": must be an integer");
  EXPECT_EQ(parse_error(R"({"name": "t", "nodes": [{"name": "a", "K": 8}]})"),
            "replay manifest m.json: nodes[0] (\"a\").N: missing (required)");
  EXPECT_EQ(parse_error(R"({"name": "t", "nodes": [{"name": "a", "N": 4294967296, "K": 8}]})"),
            "replay manifest m.json: nodes[0] (\"a\").N = 4294967296: must be at most 2147483647");
  EXPECT_EQ(parse_error(with_node(R"(, "count": 0)")),
            "replay manifest m.json: nodes[0] (\"a\").count = 0: must be positive");
  EXPECT_EQ(parse_error(with_node(R"(, "block_size": -16)")),
            "replay manifest m.json: nodes[0] (\"a\").block_size = -16: must be positive");
  EXPECT_EQ(parse_error(with_node(R"(, "blocksize": 32)")),
            "replay manifest m.json: nodes[0] (\"a\").blocksize: unknown field (known: name, N, K, "
            "block_size, count, bias)");
}

TEST(ReplayManifest, ModelLevelErrors) {
  EXPECT_EQ(parse_error(R"({"nodes": [{"name": "a", "N": 1, "K": 8}]})"),
            "replay manifest m.json: name: missing (required)");
  EXPECT_EQ(
      parse_error(R"({"name": "t", "dtype": "fp8", "nodes": [{"name": "a", "N": 1, "K": 8}]})"),
      "replay manifest m.json: dtype = \"fp8\": must be \"bf16\" or \"fp16\"");
  EXPECT_EQ(parse_error(R"({"name": "t"})"), "replay manifest m.json: nodes: missing (required)");
  EXPECT_EQ(parse_error(R"({"name": "t", "nodes": []})"),
            "replay manifest m.json: nodes = []: must list at least one node");
  EXPECT_EQ(parse_error(R"({"name": "t", "nodes": {}})"),
            "replay manifest m.json: nodes = {}: must be an array of nodes");
  EXPECT_EQ(parse_error(R"({"name": "t", "repeat": 0, "nodes": [{"name": "a", "N": 1, "K": 8}]})"),
            "replay manifest m.json: repeat = 0: must be positive");
  EXPECT_EQ(parse_error(R"({"name": "t", "layers": 4, "nodes": [{"name": "a", "N": 1, "K": 8}]})"),
            "replay manifest m.json: layers: unknown field (known: name, dtype, note, repeat, "
            "nodes, published)");
  EXPECT_EQ(
      parse_error(
          R"({"name": "t", "nodes": [{"name": "a", "N": 1, "K": 8}, {"name": "a", "N": 2, "K": 8}]})"),
      "replay manifest m.json: nodes[1].name = \"a\": used by an earlier node");
  EXPECT_EQ(parse_error(R"({"name": "t", "nodes": [7]})"),
            "replay manifest m.json: nodes[0] = 7: must be an object {name, N, K, block_size, "
            "count, bias}");
  EXPECT_EQ(parse_error(R"([1, 2])"),
            "replay manifest m.json: (top level) = [1,2]: must be an object {name, dtype, note, "
            "repeat, nodes, published}");
  EXPECT_EQ(parse_error(R"({"name": "t", "nodes": [{"name": "a", "N": 1, "K": 8}],
                            "published": {"dequant_ms": {"prefill_vec16": 3}}})"),
            "replay manifest m.json: published.dequant_ms.prefill_vec16: unknown route (see "
            "nvfp4-harness routes)");
  EXPECT_EQ(parse_error(R"({"name": "t", "nodes": [{"name": "a", "N": 1, "K": 8}],
                            "published": {"dequant_ms": {"prefill_vec8": -3}}})"),
            "replay manifest m.json: published.dequant_ms.prefill_vec8 = -3: must be a positive "
            "number of milliseconds");
}

TEST(ReplayManifest, NotJsonAndMissingFilesAreNamed) {
  const std::string e = parse_error("{\"name\": ");
  EXPECT_EQ(e.rfind("replay manifest m.json: not valid JSON: ", 0), 0u) << e;
  try {
    read_replay_manifest("/nonexistent/replay.json");
    FAIL() << "no error for a missing file";
  } catch (const std::invalid_argument& err) {
    EXPECT_STREQ(err.what(), "replay manifest /nonexistent/replay.json: cannot be opened");
  }
}

TEST(ReplayManifest, OverflowingWeightCountIsRefused) {
  const std::string e = parse_error(
      R"({"name": "t", "repeat": 1000000, "nodes": [{"name": "a", "N": 2147483647, "K": 2147483647, "count": 1000000}]})");
  EXPECT_EQ(e, "replay manifest m.json: nodes: the weight count overflows 64 bits");
}

// ---- chunks and the plan ----------------------------------------------------

TEST(ReplayChunks, EveryChunkIsFullButTheLast) {
  EXPECT_EQ(chunk_rows(8192, 256), std::vector<int64_t>(32, 256));
  std::vector<int64_t> tail(32, 256);
  tail.push_back(8);
  EXPECT_EQ(chunk_rows(8200, 256), tail);
  EXPECT_EQ(chunk_rows(100, 256), std::vector<int64_t>{100});
  EXPECT_EQ(chunk_rows(257, 256), (std::vector<int64_t>{256, 1}));
  EXPECT_EQ(chunk_rows(1, 1), std::vector<int64_t>{1});
}

TEST(ReplayChunks, NonPositivePromptOrChunkIsRefused) {
  EXPECT_THROW(chunk_rows(0, 256), std::invalid_argument);
  EXPECT_THROW(chunk_rows(8192, 0), std::invalid_argument);
  try {
    chunk_rows(8192, -4);
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "replay: --chunk = -4: must be positive");
  }
}

TEST(ReplayPlan, NaturalTakesTheDecodeRouteForAShortLastChunk) {
  const ReplayManifest m = parse_replay_manifest(with_node(""), "m.json");
  const ReplayPlan plan = plan_replay(m, {8200, 256, ReplayRoute::natural}, h200());
  ASSERT_EQ(plan.rows.size(), 33u);
  EXPECT_EQ(plan.route.front()[0], Route::prefill_vec8);
  EXPECT_EQ(plan.route.back()[0], Route::gemv_mma);  // M = 8, K % 128 == 0
  EXPECT_EQ(plan.calls, 33);
  EXPECT_EQ(plan.steps, 32 * 2 + 1);
  const auto last = chunk_steps(m, plan, 32);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].phase, ReplayPhase::whole);
  EXPECT_EQ(last[0].M, 8);
}

TEST(ReplayPlan, ForcedRoutesApplyToEveryChunk) {
  const ReplayManifest m = parse_replay_manifest(with_node(""), "m.json");
  const ReplayPlan plan = plan_replay(m, {8200, 256, ReplayRoute::prefill_scalar}, h200());
  for (const auto& chunk : plan.route) EXPECT_EQ(chunk[0], Route::prefill_scalar);
  EXPECT_EQ(plan.steps, 33 * 2);
}

// --route prefill_fused forces the fused route past its crossover: one
// whole step per call, no dequant phase; a node it cannot take is refused.
TEST(ReplayPlan, ForcedFusedIsOneStepPerCallAndRefusesAnUnfitNode) {
  const ReplayManifest m = parse_replay_manifest(with_node(""), "m.json");
  const ReplayPlan plan = plan_replay(m, {8200, 256, ReplayRoute::prefill_fused}, h200());
  for (const auto& chunk : plan.route) EXPECT_EQ(chunk[0], Route::prefill_fused);
  EXPECT_EQ(plan.steps, 33);
  EXPECT_EQ(parse_replay_route("prefill_fused"), ReplayRoute::prefill_fused);
  const ReplayManifest odd = parse_replay_manifest(
      R"({"name": "t", "nodes": [{"name": "odd_k", "N": 64, "K": 100}]})", "m.json");
  EXPECT_THROW(plan_replay(odd, {512, 256, ReplayRoute::prefill_fused}, h200()),
               std::invalid_argument);
}

TEST(ReplayPlan, ForcedVec8RefusesAnUnfitNodeByName) {
  const ReplayManifest m = parse_replay_manifest(
      R"({"name": "t", "nodes": [{"name": "odd_k", "N": 64, "K": 100}]})", "m.json");
  try {
    plan_replay(m, {512, 256, ReplayRoute::prefill_vec8}, h200());
    FAIL() << "prefill_vec8 accepted K = 100";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("replay: --route prefill_vec8 cannot run node \"odd_k\" (N = 64, K = 100, "
                         "block_size = 16) of m.json: ",
                         0),
              0u)
        << what;
  }
  // The scalar route takes any K, and natural sends it there.
  EXPECT_NO_THROW(plan_replay(m, {512, 256, ReplayRoute::prefill_scalar}, h200()));
  EXPECT_EQ(plan_replay(m, {512, 256, ReplayRoute::natural}, h200()).route[0][0],
            Route::prefill_scalar);
}

TEST(ReplayPlan, StepsRunChunkMajorInModelOrder) {
  const ReplayManifest m = parse_replay_manifest(
      R"({"name": "t", "repeat": 2, "nodes": [{"name": "a", "N": 64, "K": 128, "count": 2}, {"name": "b", "N": 32, "K": 64}]})",
      "m.json");
  const ReplayPlan plan = plan_replay(m, {600, 256, ReplayRoute::natural}, h200());
  ASSERT_EQ(plan.rows, (std::vector<int64_t>{256, 256, 88}));
  const auto steps = chunk_steps(m, plan, 2);
  // Layer 0: a#0, a#1, b#0; layer 1: a#2, a#3, b#1; each a dequant then a GEMM step.
  const std::vector<std::pair<int, int64_t>> calls = {{0, 0}, {0, 1}, {1, 0},
                                                      {0, 2}, {0, 3}, {1, 1}};
  ASSERT_EQ(steps.size(), 2 * calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(steps[2 * i].node, calls[i].first) << i;
    EXPECT_EQ(steps[2 * i].instance, calls[i].second) << i;
    EXPECT_EQ(steps[2 * i].phase, ReplayPhase::dequant) << i;
    EXPECT_EQ(steps[2 * i + 1].phase, ReplayPhase::gemm) << i;
    EXPECT_EQ(steps[2 * i].M, 88) << i;
  }
  EXPECT_EQ(plan.calls, 3 * 6);
}

TEST(ReplayPlan, RenderedPlanStatesTheWork) {
  const ReplayManifest m = shipped_manifest();
  const std::string text =
      render_replay_plan(m, plan_replay(m, {8192, 256, ReplayRoute::natural}, h200()));
  EXPECT_NE(text.find("42 x 4 node types = 168 operator nodes, 14.974e9 weight values"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("32 chunks (last 256 rows), 5376 calls, 5376 timed GPU steps"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("route natural on sm_90 with wgmma (cuda): prefill_fused x 5376"),
            std::string::npos)
      << text;
}

// ---- report arithmetic ------------------------------------------------------

TEST(ReplayReport, SumsPhasesPerRouteAndNode) {
  const ReplayManifest m = parse_replay_manifest(
      R"({"name": "t", "nodes": [{"name": "a", "N": 64, "K": 128, "bias": true}, {"name": "b", "N": 32, "K": 128}]})",
      "m.json");
  const ReplayPlan plan =
      plan_replay(m, {260, 256, ReplayRoute::natural}, h200());  // last chunk M = 4: gemv
  ReplayReport r = start_replay_report(m, plan);
  EXPECT_EQ(r.calls, 4);
  EXPECT_EQ(r.chunks, 2);
  EXPECT_EQ(r.last_chunk_rows, 4);
  // Chunk 1: a = 300 us dequant + 700 us GEMM, b = 100 + 900; chunk 2: whole calls of 50 us each.
  const double times[] = {300, 700, 100, 900};
  const auto first = chunk_steps(m, plan, 0);
  ASSERT_EQ(first.size(), 4u);
  for (std::size_t i = 0; i < first.size(); ++i) record_step(r, first[i], times[i]);
  for (const ReplayStep& s : chunk_steps(m, plan, 1)) record_step(r, s, 50);

  EXPECT_EQ(r.total.calls, 4);
  EXPECT_DOUBLE_EQ(r.total.dequant_ms, 0.4);
  EXPECT_DOUBLE_EQ(r.total.gemm_ms, 1.6);
  EXPECT_DOUBLE_EQ(r.total.whole_ms, 0.1);
  EXPECT_DOUBLE_EQ(r.total.dequant_share(), 0.4 / 2.1);
  ASSERT_EQ(r.by_route.size(), 2u);
  EXPECT_EQ(r.by_route.at("prefill_vec8").calls, 2);
  EXPECT_DOUBLE_EQ(r.by_route.at("prefill_vec8").dequant_share(), 0.2);
  EXPECT_EQ(r.by_route.at("gemv_mma").calls, 2);
  EXPECT_DOUBLE_EQ(r.by_route.at("gemv_mma").whole_ms, 0.1);
  EXPECT_DOUBLE_EQ(r.node_rows[0].t.total_ms(), 1.05);
  EXPECT_DOUBLE_EQ(r.node_rows[1].t.total_ms(), 1.05);
  EXPECT_EQ(PhaseTimes{}.dequant_share(), 0);
}

TEST(ReplayReport, TableListsNodeTypesByGpuTimeAndComparesWithPublished) {
  ReplayManifest m = parse_replay_manifest(
      R"({"name": "t", "nodes": [{"name": "small", "N": 64, "K": 128}, {"name": "big", "N": 32, "K": 64}],
          "published": {"source": "seed", "prompt": 8192, "dequant_ms": {"prefill_vec8": 4},
                        "prefill_gpu_ms": {"prefill_vec8": 10}}})",
      "m.json");
  const ReplayPlan plan = plan_replay(m, {256, 256, ReplayRoute::prefill_vec8}, h200());
  ReplayReport r = start_replay_report(m, plan);
  const auto steps = chunk_steps(m, plan, 0);
  const double times[] = {1000, 1000, 3000, 3000};
  for (std::size_t i = 0; i < steps.size(); ++i) record_step(r, steps[i], times[i]);
  r.span_us = 10000;
  r.busy_us = 8000;
  const std::string text = render_replay_table(r, 1);
  EXPECT_NE(text.find("node types, top 1 of 2 by GPU time"), std::string::npos) << text;
  EXPECT_NE(text.find("big"), std::string::npos) << text;
  EXPECT_EQ(text.find("small"), std::string::npos) << text;
  EXPECT_NE(text.find("dequant on prefill_vec8: 4 ms of 10 ms prefill GPU time (40.0%"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("this run: 4.0 ms (1.00x)"), std::string::npos) << text;
  EXPECT_NE(text.find("(this run's prompt is 256 tokens, not the published 8192)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("GPU busy in timed steps 80.0% of the timed span (2.0 ms between steps"),
            std::string::npos)
      << text;

  const nlohmann::json j = nlohmann::json::parse(render_replay_json(r));
  EXPECT_EQ(j["calls"], 2);
  EXPECT_DOUBLE_EQ(j["total"]["dequant_ms"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["total"]["dequant_share"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["routes"]["prefill_vec8"]["gemm_ms"].get<double>(), 4.0);
  ASSERT_EQ(j["node_types"].size(), 2u);
  EXPECT_EQ(j["node_types"][1]["name"], "big");
  EXPECT_TRUE(j["node_types"][1]["bias_estimate_ms"].is_null());
  EXPECT_EQ(j["published"]["dequant_ms"]["prefill_vec8"], 4);
}

TEST(ReplayReport, BiasPlacementFollowsTheGemmStepVariant) {
  EXPECT_EQ(bias_placement("cublaslt", false), "none");
  EXPECT_EQ(bias_placement("cublaslt_bias", true), "fused in GEMM (cublaslt_bias)");
  EXPECT_EQ(bias_placement("cublaslt_f32+bias_round", true),
            "separate kernel in the GEMM step (cublaslt_f32+bias_round)");
  EXPECT_TRUE(bias_is_separate("gemmex_f32+bias_round", true));
  EXPECT_FALSE(bias_is_separate("gemmex_f32+bias_round", false));
  EXPECT_EQ(bias_placement("", true), "in the GEMM step");
}

TEST(ReplayRun, RefusesTheHostBackend) {
  auto host = nvh::make_host_backend();
  const ReplayManifest m = parse_replay_manifest(with_node(""), "m.json");
  std::ostringstream log;
  try {
    run_replay(*host, m, {}, log);
    FAIL() << "the host backend was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("replay: backend = host: a replay times a GPU", 0), 0u)
        << e.what();
  }
  EXPECT_ANY_THROW(nvh::time_each_launch(*host, 1, [](int) {}));
}

TEST(ReplayRoute, NamesRoundTrip) {
  for (ReplayRoute r :
       {ReplayRoute::natural, ReplayRoute::prefill_scalar, ReplayRoute::prefill_vec8}) {
    EXPECT_EQ(parse_replay_route(replay_route_name(r)), r);
  }
  EXPECT_FALSE(parse_replay_route("gemv_mma").has_value());
}

// ---- the fill kernel, on the host executor ----------------------------------

std::vector<uint8_t> filled(nvh::Backend& b, std::size_t bytes, uint64_t seed,
                            FillRandom::Mode mode, uint8_t lo = 0, uint8_t span = 0) {
  nvh::Buffer buf(b, bytes);
  const int64_t count = mode == FillRandom::Mode::halves ? static_cast<int64_t>(bytes / 2)
                                                         : static_cast<int64_t>(bytes);
  const FillRandom::Params p{buf.data(), count, seed, mode, lo, span, nvh::HalfKind::bf16};
  nvh::launch<FillRandom>(b, FillRandom::shape(p), p);
  return buf.download_as<uint8_t>(bytes);
}

TEST(FillRandom, IsDeterministicPerSeedAndCoversTheTail) {
  auto host = nvh::make_host_backend();
  const auto a = filled(*host, 1003, 7, FillRandom::Mode::bytes);
  EXPECT_EQ(a, filled(*host, 1003, 7, FillRandom::Mode::bytes));
  EXPECT_NE(a, filled(*host, 1003, 8, FillRandom::Mode::bytes));
  // The last, partial word is written too: its bytes are the first 3 of a full word's.
  const auto longer = filled(*host, 1008, 7, FillRandom::Mode::bytes);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), longer.begin()));
  std::array<int, 16> codes{};
  for (uint8_t byte : a) ++codes[byte & 0xF];
  for (int c : codes) EXPECT_GT(c, 0);  // every E2M1 code appears
}

TEST(FillRandom, ScalesStayInTheirRangeAndHalvesInMinusOneToOne) {
  auto host = nvh::make_host_backend();
  const auto scales = filled(*host, 4096, 3, FillRandom::Mode::byte_range, 0x30, 0x10);
  std::array<int, 16> seen{};
  for (uint8_t s : scales) {
    ASSERT_GE(s, 0x30);
    ASSERT_LE(s, 0x3F);
    ++seen[s - 0x30];
  }
  for (int c : seen) EXPECT_GT(c, 0);
  const auto bytes = filled(*host, 2048, 3, FillRandom::Mode::halves);
  for (std::size_t i = 0; i < bytes.size(); i += 2) {
    const auto bits = static_cast<uint16_t>(bytes[i] | bytes[i + 1] << 8);
    const float v = nvh::half_bits_to_float(bits, nvh::HalfKind::bf16);
    ASSERT_TRUE(std::isfinite(v));
    ASSERT_GE(v, -1.0f);
    ASSERT_LE(v, 1.0f);  // rounding to bf16 may reach 1.0
  }
}

}  // namespace
}  // namespace nvfp4
