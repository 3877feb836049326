// prefill_fused on every backend this build has, against the reference: the
// edges of its tiles (rows of A and W past a tile), its K parts (a block
// stage of 1, 2 or 4 steps, a last stage with fewer), bias on and off, fp16
// and bf16, both weight paths (g = 2^e and any other g), special values, and
// the same bits as prefill_vec8 in exact mode. Then the shared-memory layout
// its comments promise, which the output cannot show (a swizzle that
// collides computes the same bits, only slower).
#include "kernels/nvfp4_matmul/prefill_fused.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/host_executor.h"
#include "harness/launch.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "kernels/nvfp4_matmul/prefill_fused_plan.h"
#include "kernels/nvfp4_matmul/prefill_fused_prepack.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_shapes.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_sum.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_wgmma.cuh"
#include "kernels/nvfp4_matmul/route_runs.h"
#include "properties/nvfp4_matmul/matmul_case.h"
#include "properties/nvfp4_matmul/value_class.h"

namespace nvfp4 {
namespace {

class FusedOnBackend : public nvh::OnBackend {};

// Runs the case forced onto prefill_fused (so the dispatcher's crossover
// does not decide what is tested) and checks it as the property suites do.
CaseRun run_fused(nvh::Backend& backend, CaseSpec spec) {
  spec.options.force_route = Route::prefill_fused;
  const CaseInputs in = make_inputs(spec);
  const Oracle oracle = make_oracle(spec, in);
  const CaseRun run = run_case(backend, spec, in);
  EXPECT_EQ(route_name(run.decision.route), std::string("prefill_fused")) << spec.name();
  EXPECT_EQ(check_output_bound(spec, in, run, oracle), "") << spec.name();
  EXPECT_EQ(check_guards(run), "") << spec.name();
  EXPECT_EQ(check_nonzero(spec, in, run, oracle), "") << spec.name();
  if (spec.exact) {
    EXPECT_EQ(check_output_exact(run, oracle), "") << spec.name();
  }
  return run;
}

CaseSpec fused_case(int64_t M, int64_t N, int64_t K, DType t, bool bias, bool exact,
                    uint64_t seed = 1) {
  return make_case("adhoc", M, N, K, 16, t, bias, exact, seed);
}

// Each block shape, with M at and one past a shape's rows, N at and past a
// block's columns, K in one slice and split across blocks (slices of one
// step and of several, a last stage with fewer steps than the block's K
// warps, more stages than the pipeline holds). The plan each shape takes is
// checked first, so the list says what it covers.
TEST_P(FusedOnBackend, MatchesTheReferenceAtTileEdges) {
  struct Shape {
    int64_t M, N, K;
    const char* plan;        // without wgmma (mma.sync)
    const char* wgmma_plan;  // with it (w128n128 above M = 64, w256n128 above 128)
  };
  const Shape shapes[] = {
      {9, 32, 128, "m16n64", "m16n64"},            // one step: a block stage of 4 with 3 warps idle
      {16, 65, 640, "m16n64/k3", "m16n64/k3"},     // slices of 1, 2, 2 steps; a block of 1 row of W
      {13, 20, 2560, "m16n64/k7", "m16n64/k7"},    // slices of 2 and 3 steps (M <= 12: GEMV-shaped)
      {17, 31, 1024, "m32n128/k4", "m32n128/k4"},  // rows of W past N; slices of one stage
      {32, 130, 1152, "m32n128/k3", "m32n128/k3"},  // slices of 3 steps over 2 K warps
      {33, 65, 256, "m64n128", "m64n128"},          // one stage of 2 steps
      {64, 7, 2304, "m64n128/k8", "m64n128/k8"},    // slices of 2 and 3 steps
      // mma.sync: two blocks over M, the second of one row; wgmma: one
      // block of 65 rows, a second block over N of 2 rows
      {65, 130, 512, "m64n128", "w128n128"},
      {100, 136, 768, "m64n128", "w128n128"},    // 3 stages of 4 (mma.sync); 6 of 5 (wgmma)
      {130, 136, 1024, "m128n128", "w256n128"},  // rows of A past M in the second tile, 8 stages
      // one row in the second tile, slices of 5; with wgmma the two meet in a cluster
      {129, 16, 1280, "m128n128/k2", "w256n128/k2-cluster"},
      // w256n128: two blocks over M (the second of 44 rows), 6 stages: more
      // than its pipeline's 3; a block over N of 8 rows past N
      {300, 136, 768, "m128n128", "w256n128"},
      {128, 64, 1792, "m64n128/k3", "w128n128/k3"},  // slices of 5, 5, 4 steps: odd and even
  };
  // Two runs a shape, fp16 and bf16, with bias and exact mode (the g = 2^e
  // fast path) alternating so that the two or more shapes of each block
  // shape between them run every (dtype, weight path) pair and each dtype
  // with bias on and off: the geometry is what differs from shape to shape,
  // and all eight combinations on every shape took four times as long on
  // the host executor (CI's coverage build).
  // Where the device has wgmma (the host executor emulates it) the shapes
  // above M = 64 run its plan, then the mma.sync plan again with caps
  // without it, so that both kernels meet every edge.
  const bool wgmma = device_caps(backend()).wgmma;
  for (std::size_t i = 0; i < std::size(shapes); ++i) {
    const Shape& s = shapes[i];
    const bool odd = i % 2 == 1, odd_pair = (i / 2) % 2 == 1;
    for (bool with_wgmma : {true, false}) {
      if (with_wgmma && !wgmma) continue;
      if (!with_wgmma && wgmma && std::string(s.plan) == s.wgmma_plan) continue;
      EXPECT_STREQ(prefill_fused_variant_name(prefill_fused_plan(s.M, s.N, s.K, with_wgmma)),
                   with_wgmma ? s.wgmma_plan : s.plan)
          << s.M << " x " << s.N << " x " << s.K;
      for (CaseSpec c : {fused_case(s.M, s.N, s.K, DType::fp16, !odd_pair, !odd, 3),
                         fused_case(s.M, s.N, s.K, DType::bf16, odd_pair, odd, 4)}) {
        if (!with_wgmma && wgmma) c.options.simulated_caps = Caps{90, false, false, "host"};
        const CaseRun run = run_fused(backend(), c);
        EXPECT_EQ(run.decision.variant, with_wgmma ? s.wgmma_plan : s.plan) << c.name();
      }
    }
  }
}

// In exact mode the fused route computes prefill_vec8's bits (every route's):
// the same digest, through both weight paths (make_inputs draws g = 2^e in
// exact mode; the contract path is the g of the second case).
TEST_P(FusedOnBackend, ExactModeGivesPrefillVec8sBits) {
  for (DType t : {DType::fp16, DType::bf16}) {
    for (int64_t M : {12, 40, 100}) {
      CaseSpec s = fused_case(M, 48, 512, t, true, true, 7);
      const std::string fused = run_fused(backend(), s).y_sha256;
      s.options.force_route = Route::prefill_vec8;
      const CaseInputs in = make_inputs(s);
      EXPECT_EQ(run_case(backend(), s, in).y_sha256, fused) << s.name();
    }
  }
}

// One problem (by default exact mode, the case generator's: g = 2^e, the
// fast path; with bias) on a backend for launches by hand: prefill_vec8's Y
// by run_case, and the same inputs in buffers.
struct HandLaunch {
  HandLaunch(nvh::Backend& backend, int64_t M, int64_t N, int64_t K, uint64_t seed,
             DType t = DType::bf16, bool exact = true) {
    CaseSpec spec = fused_case(M, N, K, t, true, exact, seed);
    spec.options.force_route = Route::prefill_vec8;
    const CaseInputs in = make_inputs(spec);
    want = run_case(backend, spec, in).Y;
    A = nvh::Buffer(backend, in.A.size() * 2, "A");
    B = nvh::Buffer(backend, in.W.packed.size(), "B");
    S = nvh::Buffer(backend, in.W.scales.size(), "scales");
    G = nvh::Buffer(backend, sizeof(float), "g");
    bias = nvh::Buffer(backend, in.bias.size() * 2, "bias");
    Y = nvh::Buffer(backend, M * N * 2, "Y");
    A.upload(in.A);
    B.upload(in.W.packed);
    S.upload(in.W.scales);
    G.upload(&in.W.global_scale, sizeof(float));
    bias.upload(in.bias);
    const ElemType half = t == DType::fp16 ? ElemType::fp16 : ElemType::bf16;
    args.A = {A.data(), {M, K}, half};
    args.B = {B.data(), {N, K / 2}, ElemType::e2m1x2};
    args.weight_scale = {S.data(), {N, K / 16}, ElemType::e4m3};
    args.weight_scale_2 = {G.data(), {}, ElemType::fp32};
    args.bias = {bias.data(), {N}, half};
    args.Y = {Y.data(), {M, N}, half};
  }
  // Parameters over every column in `slices` slices of K (parts null).
  PrefillFusedParams params(int32_t slices) const {
    return whole_columns(gemv_operands(args, describe_problem(args)), nullptr, slices);
  }
  // Whether Y holds prefill_vec8's bits.
  bool y_is_prefill_vec8s() const { return y() == want; }
  std::vector<uint16_t> y() const {
    std::vector<uint16_t> got(want.size());
    Y.download(got.data(), got.size() * 2);
    return got;
  }

  std::vector<uint16_t> want;
  nvh::Buffer A, B, S, G, bias, Y;
  MatmulArgs args;
};

// A plan's tail split (prefill_fused_plan.h, FusedPlan::tail_tiles): the
// tiles before the tail in one slice writing Y (or, by hand, in two slices
// meeting in clusters), then the tail's over [n_begin, N) in k slices, their
// parts ([k][M][N - n_begin]) summed over those columns alone, or the tail's
// slices meeting in clusters; w256n128's clustered tail overlapping the
// launch before it (prefill_fused_tail_overlaps). The plans take these only
// past 132 tiles over N, too large for the host executor, so here the runner
// (run_prefill_fused_plan) runs hand plans of 3 tiles, the tail one and two
// tiles in, split 2, 3 and 4 ways. In exact mode (every partial sum exact
// in fp32) they must give prefill_vec8's bits, every output written once:
// Y starts as 0xFF bytes, a NaN no output is.
template <class F>
void expect_tail_splits_give_prefill_vec8s_bits(nvh::Backend& backend, FusedShape shape,
                                                int64_t M) {
  const int64_t cols = F::kTileCols, N = 2 * cols + 72, K = 768;
  HandLaunch run(backend, M, N, K, static_cast<uint64_t>(M));
  std::vector<FusedPlan> plans;
  for (int64_t tail_tiles : {1, 2}) {
    for (int32_t k : {2, 3, 4}) {
      plans.push_back({shape, 1, 1, tail_tiles, k});
      if constexpr (kIsWgmmaShape<F>) {
        // The clustered tails the kernels have: w128n128's two (after the
        // rounds), w256n128's four (overlapping them).
        if (F::adds_in_a_cluster(k) && k == (F::kATiles == 2 ? 4 : 2)) {
          plans.push_back({shape, 1, 1, tail_tiles, k, false, true});
        }
        // Clusters of two before a tail of parts (no plan's: the runner's path).
        if (F::kATiles == 2 && k == 2) plans.push_back({shape, 2, 1, tail_tiles, 2, true});
      }
    }
  }
  for (const FusedPlan& plan : plans) {
    backend.fill(run.Y.data(), 0xFF, run.Y.bytes());
    std::optional<nvh::HostGridLog> log;
    if (backend.kind() == nvh::BackendKind::host) log.emplace();
    run_prefill_fused_plan(backend, run.args, describe_problem(run.args), plan, nullptr);
    const std::string what = "M = " + std::to_string(M) + ", " + prefill_fused_variant_name(plan) +
                             ", " + std::to_string(plan.tail_tiles) + " tail tiles";
    EXPECT_TRUE(run.y_is_prefill_vec8s()) << what;
    if (!log) continue;
    // The launches the plan names, each once (a second gives the same bits):
    // the tiles before the tail, the tail's, and the sum of its parts unless
    // its slices meet in clusters.
    const std::vector<nvh::HostGrid> grids = log->grids();
    ASSERT_EQ(grids.size(), plan.tail_cluster_sum ? 2u : 3u) << what;
    EXPECT_EQ(grids.back().kernel.find("PrefillFusedSum") != std::string::npos,
              !plan.tail_cluster_sum)
        << what << ": " << grids.back().kernel;
  }
}

// Every kind of plan, run by the runner on the host: prefill_vec8's bits
// from the kernels the plan names, each launched once (HostGridLog: a
// second launch of a kernel gives the same bits in twice the time). Hand
// plans on small problems: the plans pick these kinds only at sizes the
// host executor takes minutes over. Tails: ATailSplitGivesPrefillVec8sBits.
TEST(PrefillFusedRunner, EachPlanLaunchesItsKernelsOnce) {
  const std::unique_ptr<nvh::Backend> host = nvh::make_host_backend();
  struct Planned {
    int64_t M;
    FusedPlan plan;
    std::size_t grids;  // the fused kernel, and the parts' sum where there are parts
  };
  const Planned cases[] = {
      {12, {FusedShape::m16n64, 1, 3}, 2},  // the GEMV-shaped path: its kernel, its sum
      {40, {FusedShape::m64n128, 1}, 1},
      {40, {FusedShape::m64n128, 3}, 2},
      {100, {FusedShape::w128n128, 1}, 1},
      {100, {FusedShape::w128n128, 2}, 2},
      {100, {FusedShape::w128n128, 2, 1, 0, 1, true}, 1},  // slices meeting in a cluster
      {140, {FusedShape::w256n128, 3}, 2},
      {140, {FusedShape::w256n128, 2, 1, 0, 1, true}, 1},
  };
  for (const Planned& c : cases) {
    HandLaunch run(*host, c.M, 200, 768, static_cast<uint64_t>(c.M));
    host->fill(run.Y.data(), 0xFF, run.Y.bytes());
    nvh::HostGridLog log;
    run_prefill_fused_plan(*host, run.args, describe_problem(run.args), c.plan, nullptr);
    const std::string what =
        "M = " + std::to_string(c.M) + ", " + prefill_fused_variant_name(c.plan);
    EXPECT_TRUE(run.y_is_prefill_vec8s()) << what;
    const std::vector<nvh::HostGrid> grids = log.grids();
    EXPECT_EQ(grids.size(), c.grids) << what;
    if (c.grids == 2 && grids.size() == 2) {
      EXPECT_NE(grids.back().kernel.find("Sum"), std::string::npos)
          << what << ": " << grids[1].kernel;
    }
  }
}

// A hand plan the runner cannot carry out is refused before any launch, the
// error naming the field and its value (a slice count below 1 or a tail of
// every tile would launch grids of nonsense dimensions). 200 x 768: K's six
// 128-value steps, two tiles of 128 columns.
TEST(PrefillFusedRunner, RefusesAPlanItCannotCarryOut) {
  const std::unique_ptr<nvh::Backend> host = nvh::make_host_backend();
  struct Refused {
    FusedPlan plan;
    const char* error;
  };
  const Refused cases[] = {
      {{FusedShape::m64n128, 0}, "k_slices = 0, outside 1..6"},
      {{FusedShape::m64n128, -1}, "k_slices = -1, outside 1..6"},
      {{FusedShape::m64n128, 7}, "k_slices = 7, outside 1..6"},
      {{FusedShape::m16n64, 1, 0}, "gemv_slices = 0"},
      {{FusedShape::w128n128, 1, 1, 2, 2},
       "tail_tiles = 2, outside 0..1 (fewer than N's 2 tiles of 128 columns)"},
      {{FusedShape::w128n128, 1, 1, -1, 2}, "tail_tiles = -1, outside 0..1"},
      {{FusedShape::w128n128, 1, 1, 1, 0}, "tail_k_slices = 0, outside 1..6"},
  };
  for (const Refused& c : cases) {
    HandLaunch run(*host, 40, 200, 768, 7);
    nvh::HostGridLog log;
    try {
      run_prefill_fused_plan(*host, run.args, describe_problem(run.args), c.plan, nullptr);
      ADD_FAILURE() << "no error for a plan whose error would say " << c.error;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.error), std::string::npos) << e.what();
    }
    EXPECT_TRUE(log.grids().empty()) << c.error;
  }
  // The edges that are plans: six slices, a tail of all tiles but one.
  HandLaunch run(*host, 100, 200, 768, 7);
  for (const FusedPlan& plan :
       {FusedPlan{FusedShape::w128n128, 6}, FusedPlan{FusedShape::w128n128, 1, 1, 1, 6}}) {
    host->fill(run.Y.data(), 0xFF, run.Y.bytes());
    run_prefill_fused_plan(*host, run.args, describe_problem(run.args), plan, nullptr);
    EXPECT_TRUE(run.y_is_prefill_vec8s()) << prefill_fused_variant_name(plan);
  }
}

TEST_P(FusedOnBackend, ATailSplitGivesPrefillVec8sBits) {
  expect_tail_splits_give_prefill_vec8s_bits<PrefillFusedM64N128>(backend(), FusedShape::m64n128,
                                                                  40);
  if (device_caps(backend()).wgmma) {
    expect_tail_splits_give_prefill_vec8s_bits<PrefillFusedWgmma>(backend(), FusedShape::w128n128,
                                                                  100);
    expect_tail_splits_give_prefill_vec8s_bits<PrefillFusedWgmmaTiles<2>>(
        backend(), FusedShape::w256n128, 140);
  }
}

// The slices of a wgmma split that meet in a cluster (FusedPlan::cluster_sum)
// add their sums in the order prefill_fused_sum adds the parts, so they give
// the two kernels' bits for any inputs, exact or not: rows of A past M, rows
// of W past N (and groups of 4 outputs cut by N's edge), both kinds, both
// weight paths (exact mode's g = 2^e, and the generator's g otherwise).
template <class F>
void expect_cluster_sum_gives_the_two_kernels_bits(nvh::Backend& backend, int64_t M, int64_t N,
                                                   int64_t K, DType t, bool exact,
                                                   int32_t slices = 2) {
  HandLaunch run(backend, M, N, K, static_cast<uint64_t>(M + N), t, exact);
  const std::string what = std::to_string(M) + " x " + std::to_string(N) + " x " +
                           std::to_string(K) + (t == DType::fp16 ? " fp16" : " bf16") +
                           (exact ? " exact" : "") + ", " + std::to_string(slices) + " slices";
  backend.fill(run.Y.data(), 0xFF, run.Y.bytes());  // a NaN no output is
  nvh::Buffer parts(backend, slices * M * N * 4, "parts");
  PrefillFusedParams split = run.params(slices);
  split.parts = static_cast<float*>(parts.data());
  launch_fused<F>(backend, F::shape(split), split);
  nvh::launch<PrefillFusedSum>(backend, PrefillFusedSum::shape(split), split);
  const std::vector<uint16_t> want = run.y();
  backend.fill(run.Y.data(), 0xFF, run.Y.bytes());
  launch_fused_cluster_sum<F>(backend, run.params(slices));
  EXPECT_TRUE(run.y() == want) << what;
  EXPECT_TRUE(std::find(want.begin(), want.end(), uint16_t{0xFFFF}) == want.end()) << what;
}

TEST_P(FusedOnBackend, SlicesThatMeetInAClusterGiveTheTwoKernelsBits) {
  if (!device_caps(backend()).wgmma) GTEST_SKIP() << "no wgmma (sm_90a) on this device";
  expect_cluster_sum_gives_the_two_kernels_bits<PrefillFusedWgmma>(backend(), 100, 131, 768,
                                                                   DType::fp16, false);
  expect_cluster_sum_gives_the_two_kernels_bits<PrefillFusedWgmma>(backend(), 128, 256, 512,
                                                                   DType::bf16, true);
  expect_cluster_sum_gives_the_two_kernels_bits<PrefillFusedWgmmaTiles<2>>(
      backend(), 140, 262, 1024, DType::bf16, false);
  expect_cluster_sum_gives_the_two_kernels_bits<PrefillFusedWgmmaTiles<2>>(backend(), 256, 128, 768,
                                                                           DType::fp16, true);
  // Four slices (a tail split's clusters): 6 steps of K in slices of 2, 2,
  // 1 and 1 steps; each block adds a quarter of the tile's rows.
  expect_cluster_sum_gives_the_two_kernels_bits<PrefillFusedWgmmaTiles<2>>(backend(), 200, 134, 768,
                                                                           DType::bf16, false, 4);
  expect_cluster_sum_gives_the_two_kernels_bits<PrefillFusedWgmmaTiles<2>>(
      backend(), 256, 128, 1024, DType::fp16, true, 4);
}

// A cluster adds the slice counts its kernel was made for: any other is
// refused before launching, naming it.
TEST_P(FusedOnBackend, AClusterOfASliceCountItDoesNotAddIsRefused) {
  HandLaunch run(backend(), 140, 128, 768, 3);
  const auto refused = [&](auto tag, int32_t slices) {
    using F = typename decltype(tag)::type;
    try {
      launch_fused_cluster_sum<F>(backend(), run.params(slices));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("launched");
  };
  EXPECT_EQ(refused(FusedShapeTag<PrefillFusedWgmmaTiles<2>>{}, 3),
            "launch_fused_cluster_sum: k_slices = 3, which this shape's (256 rows of A a block) "
            "clusters do not add");
  EXPECT_EQ(refused(FusedShapeTag<PrefillFusedWgmma>{}, 4),
            "launch_fused_cluster_sum: k_slices = 4, which this shape's (128 rows of A a block) "
            "clusters do not add");
  EXPECT_EQ(refused(FusedShapeTag<PrefillFusedM64N128>{}, 2),
            "launch_fused_cluster_sum: the mma.sync block of 64 rows of A adds no slices in "
            "clusters");
}

// A launch may lead a tail or be one only where a kernel for that role is
// built (w256n128's one-slice rounds and its clusters of four): any other is
// refused before launching, naming what it asked for.
TEST_P(FusedOnBackend, AnOverlapRoleNoKernelHasIsRefused) {
  HandLaunch run(backend(), 100, 128, 768, 3);
  const auto refused = [&](auto tag, bool leads, bool follows) {
    using F = typename decltype(tag)::type;
    nvh::LaunchShape shape = F::shape(run.params(1));
    shape.lets_dependents_overlap = leads;
    shape.overlaps_prior_grid = shape.independent_of_prior_grid = follows;
    try {
      launch_fused<F>(backend(), shape, run.params(1));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("launched");
  };
  const std::string no_kernel =
      "launch_fused: a tail split that overlaps the launch before it, which only w256n128's "
      "kernels take (one slice before the tail, clusters of 4 as the tail)";
  EXPECT_EQ(refused(FusedShapeTag<PrefillFusedWgmma>{}, true, false), no_kernel);
  EXPECT_EQ(refused(FusedShapeTag<PrefillFusedM64N128>{}, false, true), no_kernel);
  EXPECT_EQ(refused(FusedShapeTag<PrefillFusedWgmmaTiles<2>>{}, false, true), no_kernel);  // k1
  EXPECT_EQ(refused(FusedShapeTag<PrefillFusedWgmmaTiles<2>>{}, true, true),
            "launch_fused: a launch both leads a tail and is one (lets_dependents_overlap and "
            "independent_of_prior_grid)");
}

// Past CUDA's 65535 rows of blocks a block loops over the tiles of A
// (fused_tile_launch), and prefill_fused_sum's blocks over rows of Y (or,
// when a row holds no whole groups of 4, over outputs past 4096 blocks): a
// problem that large is too large for the host executor, so here each
// launch is cut to one row of blocks (the sum's one-output path to one
// block) by hand. Each block then takes a whole tile and one of 5 rows in
// turn, handing its stages from one tile to the next. One slice writing Y,
// and two slices' parts summed; N with whole groups of 4 and without.
// Exact mode: prefill_vec8's bits, every output written once (Y starts as
// 0xFF bytes, a NaN no output is).
template <class F>
void expect_tiles_past_the_grid_give_prefill_vec8s_bits(nvh::Backend& backend) {
  const int64_t M = F::kTileRows + 5, K = 512;
  for (int64_t N : {F::kTileCols + 8, F::kTileCols + 7}) {
    HandLaunch run(backend, M, N, K, 7);
    for (int32_t k : {1, 2}) {
      backend.fill(run.Y.data(), 0xFF, run.Y.bytes());
      nvh::Buffer parts(backend, k * M * N * 4, "parts");
      PrefillFusedParams params = run.params(k);
      if (k > 1) params.parts = static_cast<float*>(parts.data());
      nvh::LaunchShape shape = F::shape(params);
      ASSERT_EQ(shape.grid.y, 2u);
      shape.grid.y = 1;
      launch_fused<F>(backend, shape, params);
      if (k > 1) {
        nvh::LaunchShape sum = PrefillFusedSum::shape(params);
        ASSERT_GT(sum.grid.x * sum.grid.y, 1u);
        sum.grid = {N % 4 == 0 ? sum.grid.x : 1, 1, 1};
        nvh::launch<PrefillFusedSum>(backend, sum, params);
      }
      EXPECT_TRUE(run.y_is_prefill_vec8s())
          << F::kTileRows << " rows a tile, N = " << N << ", " << k << " slices";
    }
  }
}

TEST_P(FusedOnBackend, TilesPastTheGridGivePrefillVec8sBits) {
  expect_tiles_past_the_grid_give_prefill_vec8s_bits<PrefillFusedM16N64>(backend());
  expect_tiles_past_the_grid_give_prefill_vec8s_bits<PrefillFusedM128N128>(backend());
  if (device_caps(backend()).wgmma) {
    expect_tiles_past_the_grid_give_prefill_vec8s_bits<PrefillFusedWgmma>(backend());
    expect_tiles_past_the_grid_give_prefill_vec8s_bits<PrefillFusedWgmmaTiles<2>>(backend());
  }
}

// The runner's tail split end to end, where the plan takes it (more tiles
// over N than the plan's 132 multiprocessors): the digest of prefill_vec8
// on the same inputs in exact mode. A GPU's only: at these sizes the host
// executor would take many minutes (the launches themselves are checked on
// every backend above).
TEST_P(FusedOnBackend, APlanWithATailGivesPrefillVec8sBits) {
  if (backend().kind() != nvh::BackendKind::cuda) GTEST_SKIP() << "too large for the host executor";
  if (!device_caps(backend()).wgmma) GTEST_SKIP() << "the tail split is the wgmma shapes'";
  struct Shape {
    int64_t M, N, K;
    const char* plan;
  };
  // 133 tiles: one past the round; 288 tiles, the last of 64 rows: 24 past
  // two, in two slices (the parts fit no more at K = 2048) or in clusters of
  // four.
  for (const Shape& t :
       {Shape{100, 17024, 1024, "w128n128/tail-k2"}, Shape{200, 36800, 2048, "w256n128/tail-k2"},
        Shape{200, 36800, 5120, "w256n128/tail-k4-cluster"}}) {
    CaseSpec s = fused_case(t.M, t.N, t.K, DType::bf16, true, true, 11);
    s.options.force_route = Route::prefill_fused;
    const CaseInputs in = make_inputs(s);
    const CaseRun fused = run_case(backend(), s, in);
    EXPECT_EQ(fused.decision.variant, t.plan) << s.name();
    s.options.force_route = Route::prefill_vec8;
    EXPECT_EQ(run_case(backend(), s, in).y_sha256, fused.y_sha256) << s.name();
  }
}

// Every special-value class (DESIGN.md, "Special values") in exact mode:
// the reference's bits, the g classes taking both weight paths. M = 20 runs
// an mma.sync shape; M = 100 the wgmma kernel where the device has it (the
// host executor does), else m64n128.
TEST_P(FusedOnBackend, SpecialValuesFollowTheContract) {
  for (int64_t M : {20, 100}) {
    for (DType t : {DType::fp16, DType::bf16}) {
      for (ValueClass c : all_value_classes()) {
        CaseSpec s = fused_case(M, 24, 256, t, true, true, 5);
        s.value_class = c;
        const CaseRun run = run_fused(backend(), s);
        if (M == 100 && device_caps(backend()).wgmma) {
          EXPECT_EQ(run.decision.variant, "w128n128") << s.name();
        }
      }
    }
  }
}

// A grid of more than 65535 tiles of A loops over grid.y: too large for the
// host executor to run, so its shape is checked instead.
TEST(PrefillFusedShape, MTilesPastTheGridLimitLoop) {
  PrefillFusedParams p{};
  p.M = int64_t{65536} * 128 + 1;
  p.N = 256;
  p.K = 128;
  p.k_slices = 1;
  p.n_end = p.N;
  using F = PrefillFusedM128N128;
  const nvh::LaunchShape s = F::shape(p);
  EXPECT_EQ(s.grid.y, F::kMaxGridRows);
  EXPECT_EQ(s.grid.x, 2u);
  EXPECT_EQ(F::m_tiles(p.M), 65537);
}

// The plan: the shape by M (at and one past each shape's rows), and K split
// across blocks only while the blocks over M and N leave SMs idle, never
// into slices of less than a step or parts over half the scratch.
// Each FusedShape runs the kernel its name says (with_fused_shape): a shape
// mapped to another kernel computes the same bits (every shape sums in the
// same order) but at that kernel's speed, which the plan's timings are not;
// so the map is held here by the block each kernel holds (rows of A x rows
// of W) and whether it is the wgmma kernel.
TEST(PrefillFusedPlan, EachShapeRunsTheKernelItsNameSays) {
  const auto block = [](FusedShape shape) {
    return with_fused_shape(shape, [](auto tag) {
      using F = typename decltype(tag)::type;
      return std::to_string(F::kTileRows) + "x" + std::to_string(F::kTileCols) +
             (kIsWgmmaShape<F> ? " wgmma" : "");
    });
  };
  EXPECT_EQ(block(FusedShape::m16n64), "16x64");
  EXPECT_EQ(block(FusedShape::m32n128), "32x128");
  EXPECT_EQ(block(FusedShape::m64n128), "64x128");
  EXPECT_EQ(block(FusedShape::m128n128), "128x128");
  EXPECT_EQ(block(FusedShape::w128n128), "128x128 wgmma");
  EXPECT_EQ(block(FusedShape::w256n128), "256x128 wgmma");
}

TEST(PrefillFusedPlan, ShapeByMSlicesByTheBlocksLeft) {
  const auto plan = [](int64_t M, int64_t N, int64_t K, bool wgmma = false) {
    return std::string(prefill_fused_variant_name(prefill_fused_plan(M, N, K, wgmma)));
  };
  EXPECT_EQ(plan(16, 4096, 4096), "m16n64/k2");   // 64 blocks on 132 SMs: 2 x 64
  EXPECT_EQ(plan(17, 4096, 4096), "m32n128/k4");  // 32 blocks: 4 x 32 of 132
  EXPECT_EQ(plan(32, 14336, 4096), "m32n128");    // 112 blocks: parts would cost more
  EXPECT_EQ(plan(33, 4096, 4096), "m64n128/k4");
  EXPECT_EQ(plan(64, 4096, 14336), "m64n128/k4");
  EXPECT_EQ(plan(65, 4096, 4096), "m64n128/k2");  // 64 blocks over N and M
  EXPECT_EQ(plan(128, 4096, 4096), "m64n128/k2");
  EXPECT_EQ(plan(256, 4096, 4096), "m128n128/k2");
  EXPECT_EQ(plan(512, 4096, 4096), "m128n128");  // 128 blocks: no split
  EXPECT_EQ(plan(16, 16896, 4096), "m16n64");    // 264 blocks: two waves, no split
  EXPECT_EQ(plan(16, 64, 128), "m16n64");        // one step: nothing to split
  EXPECT_EQ(plan(64, 7, 2304), "m64n128/k8");    // at most 8 slices
  // With wgmma: the same up to M = 64, then w128n128 (one block an SM) with
  // the most slices that fit one wave, the splits the H200 measured fastest
  // (PERF.md: k4, k1, k4 at M = 128 on the three msweep shapes).
  EXPECT_EQ(plan(64, 4096, 14336, true), "m64n128/k4");
  EXPECT_EQ(plan(65, 4096, 4096, true), "w128n128/k4");   // 32 blocks: 4 x 32 of 132
  EXPECT_EQ(plan(128, 4096, 4096, true), "w128n128/k4");  // the most slices in one wave
  EXPECT_EQ(plan(128, 14336, 4096, true), "w128n128");    // 112 blocks
  EXPECT_EQ(plan(128, 4096, 14336, true), "w128n128/k4");
  // Above M = 128 w256n128, each weight decoded once for 256 rows of A:
  // the splits the H200 measured fastest of k1, k2, k4, k8 (PERF.md).
  EXPECT_EQ(plan(256, 4096, 4096, true), "w256n128/k4");
  EXPECT_EQ(plan(256, 14336, 4096, true), "w256n128");
  EXPECT_EQ(plan(256, 4096, 14336, true), "w256n128/k4");
  EXPECT_EQ(plan(512, 4096, 4096, true), "w256n128/k2-cluster");  // two slices meet in a cluster
  EXPECT_EQ(plan(1024, 4096, 4096, true), "w256n128");
  // K whole where the blocks fill kFusedNoSplitFillPercent (65 %) of the
  // slots: 86 tiles (65.2 %) and 96 do, 85 (64.4 %) and 80 take the model's split.
  EXPECT_EQ(plan(256, 86 * 128, 4096, true), "w256n128");
  EXPECT_EQ(plan(129, 12288, 4096, true), "w256n128");
  EXPECT_EQ(plan(128, 12288, 4096, true), "w128n128");
  EXPECT_EQ(plan(256, 85 * 128, 4096, true), "w256n128/k3");
  EXPECT_EQ(plan(128, 85 * 128, 4096, true), "w128n128/k3");
  EXPECT_NE(plan(256, 10240, 4096, true), "w256n128");
  // More tiles over N than multiprocessors, with wgmma and one block over
  // M: the tiles past the last whole round split along K (tail_tiles).
  // 288 tiles: 24 past 2 rounds, which the model splits in 5; w256n128
  // takes 4 in clusters of four (at most kFusedClustersOfFour: 30 do, 31 not).
  EXPECT_EQ(plan(256, 36864, 5120, true), "w256n128/tail-k4-cluster");
  EXPECT_EQ(plan(256, (264 + 30) * 128, 5120, true), "w256n128/tail-k4-cluster");
  EXPECT_EQ(plan(256, (264 + 31) * 128, 5120, true), "w256n128/tail-k4");
  EXPECT_EQ(plan(200, 36800, 5120, true), "w256n128/tail-k4-cluster");
  EXPECT_EQ(plan(256, 5120, 6144, true), "w256n128/k3");  // three slices: two kernels
  EXPECT_TRUE(prefill_fused_tail_overlaps(prefill_fused_plan(256, 36864, 5120, true)));
  // A hand plan of a kind no plan takes: named as well, the same pointer each time.
  const FusedPlan by_hand{FusedShape::w256n128, 2, 1, 1, 2, true};
  EXPECT_STREQ(prefill_fused_variant_name(by_hand), "w256n128/k2-cluster/tail-k2");
  EXPECT_EQ(prefill_fused_variant_name(by_hand), prefill_fused_variant_name(by_hand));
  // More slices than the table's kFusedMaxKSlices (a bench's hand plan): named past the table.
  EXPECT_STREQ(prefill_fused_variant_name({FusedShape::w128n128, kFusedMaxKSlices + 1}),
               ("w128n128/k" + std::to_string(kFusedMaxKSlices + 1)).c_str());
  EXPECT_STREQ(prefill_fused_variant_name({FusedShape::w128n128, 1, 1, 1, kFusedMaxKSlices + 1}),
               ("w128n128/tail-k" + std::to_string(kFusedMaxKSlices + 1)).c_str());
  EXPECT_FALSE(prefill_fused_tail_overlaps(prefill_fused_plan(128, 36864, 5120, true)));
  EXPECT_EQ(plan(128, 36864, 5120, true), "w128n128/tail-k5");
  EXPECT_EQ(plan(256, 18944, 3584, true), "w256n128/tail-k3");  // 16 past; parts: K / 4M = 3
  EXPECT_EQ(plan(256, 33792, 4096, true), "w256n128");          // 264 tiles: two whole rounds
  EXPECT_EQ(plan(256, 28672, 4096, true), "w256n128");  // 92 past: 2 x 92 blocks exceed a round
  EXPECT_EQ(plan(257, 36864, 5120, true), "w256n128");  // two blocks over M: no tail
  EXPECT_EQ(plan(64, 36864, 5120, true), "m64n128");    // the mma.sync shapes: no tail
  const FusedPlan tail = prefill_fused_plan(256, 36864 - 64, 5120, true);
  EXPECT_EQ(tail.tail_tiles, 24);
  EXPECT_EQ(tail.k_slices, 1);
  EXPECT_EQ(tail.tail_k_slices, 4);
  EXPECT_TRUE(tail.tail_cluster_sum);
  EXPECT_FALSE(tail.cluster_sum);
  // How the plan's blocks fill their rounds (the crossover at M = 448..512):
  // blocks over M, N and K slices, rounds of 132 slots, the fill counted
  // over every round, K slices of 4096 values or more.
  const auto rounds = [](int64_t M, int64_t N, int64_t K) {
    const FusedRounds r = prefill_fused_rounds(prefill_fused_plan(M, N, K, true), M, N, K);
    return std::to_string(r.blocks) + " in " + std::to_string(r.rounds) + " x " +
           std::to_string(r.slots) + ", slices of " + std::to_string(r.k_per_slice);
  };
  const auto fills = [](int64_t M, int64_t N, int64_t K) {
    return prefill_fused_fills_its_rounds(prefill_fused_plan(M, N, K, true), M, N, K);
  };
  EXPECT_EQ(rounds(512, 8192, 4096), "128 in 1 x 132, slices of 4096");  // 64 tiles x 2 over M
  EXPECT_TRUE(fills(512, 8192, 4096));
  EXPECT_EQ(rounds(448, 53 * 128, 4096), "106 in 1 x 132, slices of 4096");  // 80.3 %
  EXPECT_TRUE(fills(448, 53 * 128, 4096));
  EXPECT_EQ(rounds(448, 52 * 128, 4096), "104 in 1 x 132, slices of 4096");  // 78.8 %
  EXPECT_FALSE(fills(448, 52 * 128, 4096));
  EXPECT_EQ(rounds(512, 4096, 8192), "128 in 1 x 132, slices of 4096");  // k2
  EXPECT_TRUE(fills(512, 4096, 8192));
  EXPECT_EQ(rounds(512, 4096, 8064), "128 in 1 x 132, slices of 4032");
  EXPECT_FALSE(fills(512, 4096, 8064));
  EXPECT_EQ(rounds(512, 14336, 4096), "224 in 2 x 132, slices of 4096");  // 84.8 % of two
  EXPECT_TRUE(fills(512, 14336, 4096));
  EXPECT_EQ(rounds(512, 12288, 4096), "192 in 2 x 132, slices of 4096");  // 72.7 %
  EXPECT_FALSE(fills(512, 12288, 4096));
  EXPECT_EQ(rounds(512, 5120, 6144), "240 in 2 x 132, slices of 2048");  // k3 over two rounds
  EXPECT_FALSE(fills(512, 5120, 6144));
  // A tail split: each launch its own rounds (264 whole tiles, then 24 in
  // 4 slices); 148 tiles: 132, then 16 in 3 slices.
  EXPECT_EQ(rounds(256, 36864, 5120), "360 in 3 x 132, slices of 5120");
  // Tiles that fill whole rounds leave no tail: K whole, one slice (its name
  // alone cannot tell: a plan of -1 slices is named "w256n128" too).
  EXPECT_EQ(rounds(256, 33792, 4096), "264 in 2 x 132, slices of 4096");
  EXPECT_EQ(rounds(256, 18944, 3584), "180 in 2 x 132, slices of 3584");
  EXPECT_EQ(rounds(12, 4096, 4096), "0 in 0 x 0, slices of 0");  // the GEMV-shaped path
  EXPECT_FALSE(fills(12, 4096, 4096));
  // The tail's parts: 23 whole tiles and the last 64 columns; none where
  // its slices meet in clusters.
  const FusedPlan parted = prefill_fused_plan(128, 36864 - 64, 5120, true);
  EXPECT_EQ(parted.tail_k_slices, 5);
  EXPECT_EQ(prefill_fused_workspace_bytes(128, 36864 - 64, parted),
            std::size_t{5} * 128 * (23 * 128 + 64) * 4 + 16);
  EXPECT_EQ(prefill_fused_workspace_bytes(256, 36864 - 64, tail), 0u);
  // Never a slice without a step, never parts over half the [N, K] scratch.
  for (bool wgmma : {false, true}) {
    for (int64_t M : {9, 16, 33, 64, 100, 300}) {
      for (int64_t K : {128, 256, 384, 1024, 4096}) {
        const FusedPlan p = prefill_fused_plan(M, 96, K, wgmma);
        EXPECT_LE(p.k_slices, K / 128) << M << " x " << K;
        EXPECT_LE(4 * M * p.k_slices, std::max<int64_t>(K, 4 * M)) << M << " x " << K;
      }
    }
  }
  EXPECT_EQ(prefill_fused_workspace_bytes(64, 64, prefill_fused_plan(64, 64, 1024, false)),
            std::size_t{2} * 64 * 64 * 4 + 16);
  EXPECT_EQ(prefill_fused_workspace_bytes(512, 4096, prefill_fused_plan(512, 4096, 4096, false)),
            0u);
}

// Every (row, chunk) of a stage has its own 16-byte slot, inside its row's
// area, so what one thread copies in is what another reads back.
template <class F>
void expect_slots_tile_the_stage() {
  std::set<uint32_t> slots;
  for (uint32_t row = 0; row < F::kTileRows; ++row) {
    for (uint32_t c = 0; c < F::kAChunksPerRow; ++c) {
      const uint32_t off = F::a_offset(row, c);
      EXPECT_EQ(off / F::kARowBytes, row) << "A chunk " << c << " left its row";
      slots.insert(off);
    }
  }
  for (uint32_t row = 0; row < F::kTileCols; ++row) {
    for (uint32_t c = 0; c < F::kWChunksPerRow; ++c) {
      const uint32_t off = F::w_offset(row, c);
      EXPECT_EQ((off - F::kABytes) / F::kWRowBytes, row) << "W chunk " << c << " left its row";
      slots.insert(off);
    }
  }
  EXPECT_EQ(slots.size(), F::kTileRows * F::kAChunksPerRow + F::kTileCols * F::kWChunksPerRow);
  EXPECT_LE(F::scale_offset(F::kTileCols - 1) + F::kScaleRowBytes, F::kStageBytes);
}

TEST(PrefillFusedLayout, SlotsTileTheStage) {
  expect_slots_tile_the_stage<PrefillFusedM16N64>();
  expect_slots_tile_the_stage<PrefillFusedM32N128>();
  expect_slots_tile_the_stage<PrefillFusedM64N128>();
  expect_slots_tile_the_stage<PrefillFusedM128N128>();
}

// The reads of mma_step: lane (g, t) takes chunk 16 kw + 4t + q of A's rows
// 16i + g (and + 8), and chunk 4 kw + t of W's rows 8j + g. The 8 lanes of a
// quarter-warp (rows g, g + 1) must hit the 32 banks once.
template <class F>
void expect_reads_hit_every_bank_once() {
  for (int kw = 0; kw < F::kKWarps; ++kw) {
    for (uint32_t quarter = 0; quarter < 4; ++quarter) {
      for (uint32_t q = 0; q < 4; ++q) {
        std::bitset<32> a_banks, w_banks;
        for (uint32_t lane = 8 * quarter; lane < 8 * quarter + 8; ++lane) {
          const uint32_t g = lane / 4, t = lane % 4;
          const uint32_t a = F::a_offset(8 + g, 16 * kw + 4 * t + q);
          const uint32_t w = F::w_offset(8 + g, 4 * kw + t);
          for (uint32_t word = 0; word < 4; ++word) {
            a_banks.set((a / 4 + word) % 32);
            w_banks.set((w / 4 + word) % 32);
          }
        }
        EXPECT_TRUE(a_banks.all()) << F::kTileRows << " rows, kw " << kw << ", quarter " << quarter
                                   << ", q " << q << ": A banks " << a_banks;
        EXPECT_TRUE(w_banks.all()) << F::kTileRows << " rows, kw " << kw << ", quarter " << quarter
                                   << ": W banks " << w_banks;
      }
    }
  }
}

TEST(PrefillFusedLayout, AQuarterWarpsReadsHitEveryBankOnce) {
  expect_reads_hit_every_bank_once<PrefillFusedM16N64>();
  expect_reads_hit_every_bank_once<PrefillFusedM32N128>();
  expect_reads_hit_every_bank_once<PrefillFusedM64N128>();
  expect_reads_hit_every_bank_once<PrefillFusedM128N128>();
}

// prefill_fused_wgmma.cuh's stage: A's rows are wgmma's B tile (device_ctx.cuh:
// row r's k-chunk j at (r / 8) * 1024 + (r % 8) * 128 + 16 (j ^ r % 8) of a
// 1024-byte-aligned half), all kTileRows of them one tile a half (one wgmma
// of N = kTileRows a k16 step), every (row, chunk) of A and W has its own slot,
// the scales follow, and a quarter-warp's 16-byte reads of W's rows (8 rows
// of 64 bytes, where the TMA's 64-byte swizzle puts their chunks) hit every
// bank once.
template <class F>
void expect_wgmma_stage_layout() {
  std::set<uint32_t> slots;
  for (uint32_t r = 0; r < F::kTileRows; ++r) {
    for (uint32_t c = 0; c < 16; ++c) {
      const uint32_t half = c / 8, j = c % 8;
      const uint32_t half_bytes = F::kTileRows * 128;  // the block's rows of one 64-k half
      EXPECT_EQ(F::a_offset(r, c),
                half * half_bytes + (r / 8) * 1024 + (r % 8) * 128 + 16 * (j ^ (r % 8)))
          << "row " << r << ", chunk " << c;
      slots.insert(F::a_offset(r, c));
    }
  }
  EXPECT_EQ(F::kAHalfBytes % 1024, 0u);
  // The TMA puts a box (128 rows of 64 k: tile r / 128, half c / 8) at
  // a_box(tile, half), its row rt's 16-byte chunk j at rt * 128 + 16 j
  // swizzled by the address's row bits (tensor_map.h's rule, the box
  // 1024-byte aligned): where a_offset says wgmma reads it.
  for (uint32_t r = 0; r < F::kTileRows; ++r) {
    for (uint32_t c = 0; c < 16; ++c) {
      const uint32_t box = F::a_box(r / 128, c / 8);
      EXPECT_EQ(box % 1024, 0u);
      const uint32_t dense = (r % 128) * 128 + 16 * (c % 8);
      EXPECT_EQ(F::a_offset(r, c), box + (dense ^ (((dense >> 7) & 7u) << 4)))
          << "row " << r << ", chunk " << c;
    }
  }
  EXPECT_EQ(F::kAHalfBytes, 128u * 64 * 2) << "a box: 128 rows of 64 2-byte values";
  for (uint32_t r = 0; r < F::kTileCols; ++r) {
    for (uint32_t c = 0; c < F::kWRowBytes / 16; ++c) {
      slots.insert(F::w_chunk_offset(r, c));
      // The TMA's box of W at w_offset(0) (512-byte aligned), row r's chunk
      // c where the 64-byte swizzle puts it (tensor_map.h's rule).
      const uint32_t dense = r * F::kWRowBytes + 16 * c;
      EXPECT_EQ(F::w_chunk_offset(r, c), F::w_offset(0) + (dense ^ (((dense >> 7) & 3u) << 4)))
          << "W row " << r << ", chunk " << c;
    }
    EXPECT_GE(F::w_offset(r), F::kABytes);
  }
  EXPECT_EQ(F::w_offset(0) % 512, 0u);
  EXPECT_EQ(slots.size(), F::kTileRows * 16 + F::kTileCols * F::kWRowBytes / 16);
  EXPECT_GE(F::scale_offset(0), F::w_offset(F::kTileCols - 1) + F::kWRowBytes);
  EXPECT_LE(F::scale_offset(F::kTileCols - 1) + F::kScaleRowBytes, F::kStageBytes);
  EXPECT_EQ(F::kStageBytes % 1024, 0u);
  for (uint32_t c = 0; c < F::kWRowBytes / 16; ++c) {
    std::bitset<32> banks;
    for (uint32_t lane = 0; lane < 8; ++lane) {  // rows g = 0, 1 of the quarter's lanes read alike
      const uint32_t w = F::w_chunk_offset(lane, c);
      for (uint32_t word = 0; word < 4; ++word) banks.set((w / 4 + word) % 32);
    }
    EXPECT_TRUE(banks.all()) << "W chunk " << c << ": banks " << banks;
  }
  // Prepacked codes: a row's 16 words (lane t, pair p of 32-k groups, two
  // words each) fill its 64 bytes, and each half-warp's 8-byte loads (lane
  // 4g + t: rows g = 0..3 or 4..7 of its warp, and the same 8 rows on) meet
  // every bank once, for every warp's rows.
  for (uint32_t r = 0; r < F::kTileCols; ++r) {
    std::set<uint32_t> words;
    for (uint32_t t = 0; t < 4; ++t) {
      for (uint32_t pair = 0; pair < 2; ++pair) {
        const uint32_t at = F::prepacked_word_offset(r, t, pair);
        EXPECT_EQ(at % 8, 0u);
        EXPECT_GE(at, F::w_offset(r));
        EXPECT_LE(at + 8, F::w_offset(r) + F::kWRowBytes);
        words.insert(at);
      }
    }
    EXPECT_EQ(words.size(), 8u) << "W row " << r;
  }
  // The one-tile kernel's offsets from a thread's first
  // (prepacked_word_from, Place::prepacked_first): rows g and g + 8 of each
  // warp's 16, both pairs.
  for (uint32_t tid = 0; tid < F::kMaxBlockThreads; ++tid) {
    const auto w = F::Place::of(tid, nullptr);
    for (uint32_t h = 0; h < 2; ++h) {
      for (uint32_t pair = 0; pair < 2; ++pair) {
        EXPECT_EQ(F::prepacked_word_from(w.prepacked_first(), h, pair),
                  F::prepacked_word_offset(w.w_row0() + 8 * h, w.t, pair))
            << "thread " << tid << ", row " << w.w_row0() + 8 * h << ", pair " << pair;
      }
    }
  }
  for (uint32_t row0 = 0; row0 < F::kTileCols; row0 += 8) {
    for (uint32_t half = 0; half < 2; ++half) {
      for (uint32_t pair = 0; pair < 2; ++pair) {
        std::bitset<32> banks;
        for (uint32_t lane = 16 * half; lane < 16 * half + 16; ++lane) {
          const uint32_t at = F::prepacked_word_offset(row0 + lane / 4, lane % 4, pair);
          banks.set((at / 4) % 32);
          banks.set((at / 4 + 1) % 32);
        }
        EXPECT_TRUE(banks.all()) << "prepacked rows " << row0 << "+, half-warp " << half
                                 << ", pair " << pair << ": banks " << banks;
      }
    }
  }
}

// One tile of A (w128n128) and two (w256n128), whose stages also fit the
// shared memory (PrefillFusedWgmmaTiles::kSharedBytes's static_assert).
TEST(PrefillFusedWgmmaLayout, AIsWgmmasSwizzledTileAndSlotsTileTheStage) {
  expect_wgmma_stage_layout<PrefillFusedWgmmaTiles<1>>();
  expect_wgmma_stage_layout<PrefillFusedWgmmaTiles<2>>();
}

// The prepacked order (prefill_fused_prepack.cuh) restated from its
// definition, one nibble at a time, independent of the kernel's prmt and
// shuffle: in each 64-byte row stage, lane t's word of 32-k group j at byte
// 32 (t / 2) + 16 (j / 2) + 8 (t % 2) + 4 (j % 2), with the code of k = 32j +
// 8i + 2t in its nibble i and the next k's in nibble 4 + i.
std::vector<uint8_t> prepacked_by_definition(const std::vector<uint8_t>& B, int64_t N, int64_t K) {
  const auto code = [&](int64_t n, int64_t k) {
    return (B[static_cast<std::size_t>(n * K / 2 + k / 2)] >> (4 * (k % 2))) & 0xF;
  };
  std::vector<uint8_t> out(B.size());
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t s = 0; s < K / 128; ++s) {
      for (int64_t t = 0; t < 4; ++t) {
        for (int64_t j = 0; j < 4; ++j) {
          uint32_t word = 0;
          for (int64_t i = 0; i < 4; ++i) {
            const int64_t k = 128 * s + 32 * j + 8 * i + 2 * t;
            word |= static_cast<uint32_t>(code(n, k)) << (4 * i);
            word |= static_cast<uint32_t>(code(n, k + 1)) << (4 * (4 + i));
          }
          const int64_t at =
              n * K / 2 + 64 * s + 32 * (t / 2) + 16 * (j / 2) + 8 * (t % 2) + 4 * (j % 2);
          std::memcpy(&out[static_cast<std::size_t>(at)], &word, 4);
        }
      }
    }
  }
  return out;
}

// prepack_for_fused writes that order, byte for byte, on random codes: one
// row of one stage, rows of several, and more row stages than its grid's
// threads (its grid-stride loop).
TEST_P(FusedOnBackend, PrepackWritesTheOrderItsHeaderDefines) {
  std::mt19937 rng(16);
  struct Shape {
    int64_t N, K;
  };
  for (const Shape& sh : {Shape{1, 128}, Shape{3, 384}, Shape{130, 1024}, Shape{8200, 16384}}) {
    if (sh.N * sh.K > (int64_t{1} << 24) && backend().kind() == nvh::BackendKind::host) continue;
    std::vector<uint8_t> B(static_cast<std::size_t>(sh.N * sh.K / 2));
    for (uint8_t& b : B) b = static_cast<uint8_t>(rng());
    nvh::Buffer in(backend(), B.size(), "B"), out(backend(), B.size(), "prepacked");
    in.upload(B);
    prepack_for_fused(backend(), TensorArg{in.data(), {sh.N, sh.K / 2}, ElemType::e2m1x2}, sh.K,
                      out.data());
    std::vector<uint8_t> got(B.size());
    out.download(got.data(), got.size());
    const std::vector<uint8_t> want = prepacked_by_definition(B, sh.N, sh.K);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0) << sh.N << " x " << sh.K;
  }
}

// The wgmma kernel on prepacked codes computes the bits it computes on the
// contract's order: both tile counts, K in one slice, split into parts and
// meeting in a cluster, a tail split, rows of W past N; fp16 and bf16; the
// fast path (exact mode, also prefill_vec8's bits) and the contract path (a
// g that is not a power of two). The mma.sync shapes ignore prepacked_B.
TEST_P(FusedOnBackend, PrepackedCodesGiveTheContractOrdersBits) {
  if (!device_caps(backend()).wgmma) GTEST_SKIP() << "prepacked codes are the wgmma kernel's";
  struct Shape {
    int64_t M, N;
    FusedPlan plan;
  };
  const int64_t K = 640;
  const Shape shapes[] = {
      {100, 136, {FusedShape::w128n128, 1}},
      {100, 72, {FusedShape::w128n128, 3}},
      {200, 136, {FusedShape::w256n128, 2, 1, 0, 1, true}},
      {200, 200, {FusedShape::w256n128, 1, 1, 1, 2}},
      {40, 136, {FusedShape::m32n128, 2}},
  };
  for (const Shape& sh : shapes) {
    for (DType t : {DType::fp16, DType::bf16}) {
      for (bool exact : {true, false}) {
        HandLaunch run(backend(), sh.M, sh.N, K, 21, t, exact);
        const std::string what = std::string(prefill_fused_variant_name(sh.plan)) +
                                 ", M = " + std::to_string(sh.M) + ", N = " + std::to_string(sh.N) +
                                 (t == DType::fp16 ? ", fp16" : ", bf16") +
                                 (exact ? ", exact" : ", contract path");
        run_prefill_fused_plan(backend(), run.args, describe_problem(run.args), sh.plan, nullptr);
        const std::vector<uint16_t> contract_order = run.y();
        if (exact) {
          EXPECT_TRUE(run.y_is_prefill_vec8s()) << what;
        }
        nvh::Buffer prepacked(backend(), run.B.bytes(), "prepacked");
        prepack_for_fused(backend(), run.args.B, K, prepacked.data());
        MatmulArgs args = run.args;
        args.prepacked_B = {prepacked.data(), args.B.shape, ElemType::e2m1x2};
        backend().fill(run.Y.data(), 0xFF, run.Y.bytes());
        run_prefill_fused_plan(backend(), args, describe_problem(args), sh.plan, nullptr);
        const std::vector<uint16_t> got = run.y();
        EXPECT_EQ(std::memcmp(got.data(), contract_order.data(), got.size() * 2), 0) << what;
      }
    }
  }
}

// Bad prepacked input is named: a K the order has no stages for, a shape or
// type not B's, an address the TMA cannot read.
TEST_P(FusedOnBackend, PrepackRefusesWhatItCannotOrder) {
  nvh::Buffer b(backend(), 4096, "B"), out(backend(), 4096, "out");
  const auto message = [&](const TensorArg& B, int64_t K, void* to) {
    return nvh::thrown<std::invalid_argument>([&] { prepack_for_fused(backend(), B, K, to); });
  };
  EXPECT_NE(message({b.data(), {4, 96}, ElemType::e2m1x2}, 192, out.data()).find("K = 192"),
            std::string::npos);
  EXPECT_NE(message({b.data(), {4, 64}, ElemType::e2m1x2}, 256, out.data()).find("[4, 64]"),
            std::string::npos);
  EXPECT_NE(message({b.data(), {4, 64}, ElemType::e4m3}, 128, out.data()).find("B.type = e4m3"),
            std::string::npos);
  EXPECT_NE(
      message({b.data(), {4, 64}, ElemType::e2m1x2}, 128, static_cast<uint8_t*>(out.data()) + 8)
          .find("out.data"),
      std::string::npos);
  HandLaunch run(backend(), 100, 16, 256, 3);
  MatmulArgs args = run.args;
  args.prepacked_B = {out.data(), {16, 64}, ElemType::e2m1x2};
  EXPECT_NE(nvh::thrown<std::invalid_argument>([&] {
              describe_problem(args);
            }).find("prepacked_B.shape = [16, 64]: expected [16, 128]"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Backends, FusedOnBackend, ::testing::ValuesIn(nvh::backend_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace nvfp4
