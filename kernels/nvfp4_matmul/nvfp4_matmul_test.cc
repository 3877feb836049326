// The operator on every backend this build has, against the reference.
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/host_executor.h"
#include "harness/launch.h"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"
#include "kernels/nvfp4_matmul/gemv_mma_slices.cuh"
#include "kernels/nvfp4_matmul/gemv_scalar.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_plan.h"
#include "kernels/nvfp4_matmul/prefill_vec8.cuh"
#include "properties/nvfp4_matmul/matmul_case.h"
#include "reference/nvfp4_matmul/dequant.h"

namespace nvfp4 {
namespace {

using nvh::backend_names;
using OnBackend = nvh::OnBackend;

// Runs one case and every check that applies; returns the run.
CaseRun run_and_check(nvh::Backend& backend, const CaseSpec& spec, Route expected) {
  const CaseInputs in = make_inputs(spec);
  const Oracle oracle = make_oracle(spec, in);
  const CaseRun run = run_case(backend, spec, in);
  EXPECT_EQ(route_name(run.decision.route), std::string(route_name(expected)))
      << spec.name() << ": " << run.decision.detail;
  EXPECT_EQ(check_scratch(run, oracle), "") << spec.name();
  EXPECT_EQ(check_output_bound(spec, in, run, oracle), "") << spec.name();
  EXPECT_EQ(check_guards(run), "") << spec.name();
  EXPECT_EQ(check_nonzero(spec, in, run, oracle), "") << spec.name();
  if (spec.exact) {
    EXPECT_EQ(check_output_exact(run, oracle), "") << spec.name();
  }
  return run;
}

CaseSpec spec(int64_t M, int64_t N, int64_t K, int64_t bs, DType t = DType::fp16,
              bool bias = false) {
  return make_case("adhoc", M, N, K, bs, t, bias);
}

TEST_P(OnBackend, PrefillVec8MatchesTheReference) {
  for (DType t : {DType::fp16, DType::bf16}) {
    run_and_check(backend(), spec(9, 64, 136, 16, t, true), Route::prefill_vec8);  // K % 128
    run_and_check(backend(), spec(33, 17, 40, 8, t), Route::prefill_vec8);
    run_and_check(backend(), spec(4, 24, 96, 32, t, true),
                  Route::prefill_vec8);  // decode-miss: block_size
    run_and_check(backend(), spec(12, 5, 8, 2, t),
                  Route::prefill_vec8);  // 4 scale blocks per chunk
    run_and_check(backend(), spec(10, 3, 24, 16, t),
                  Route::prefill_vec8);  // partial last scale block
    run_and_check(backend(), spec(10, 7, 16, 64, t), Route::prefill_vec8);  // block_size > K
  }
}

// A block is as many whole warps as K has 8-value chunks, up to 256 threads;
// rows go to grid.y, 16 a thread. Idle lanes would cost nothing in the
// output, only time (on the host executor most of all), so only the shape
// can show them.
TEST(PrefillVec8Shape, BlocksAreTheChunksInWholeWarpsUpTo256Threads) {
  const auto shape_for = [](int64_t N, int64_t K) {
    DequantParams p{};
    p.N = N;
    p.K = K;
    return PrefillVec8::shape(p);
  };
  struct Want {
    int64_t N, K;
    uint32_t threads, blocks_x, blocks_y;
  };
  for (const Want& w : {Want{1, 40, 32, 1, 1}, Want{17, 264, 64, 1, 2}, Want{16, 2048, 256, 1, 1},
                        Want{33, 4096, 256, 2, 3}}) {
    const nvh::LaunchShape s = shape_for(w.N, w.K);
    EXPECT_EQ(s.block.x, w.threads) << w.N << " x " << w.K;
    EXPECT_EQ(s.grid.x, w.blocks_x) << w.N << " x " << w.K;
    EXPECT_EQ(s.grid.y, w.blocks_y) << w.N << " x " << w.K;
  }
}

// gemv_scalar: a warp a group of rows_per_warp rows of W (the last group
// may be short), kWarpsPerBlock warps a block, and no block past the last
// group's: an idle block changes no output, only time, so only the shape
// shows it.
TEST(GemvScalarShape, AWarpARowGroupInBlocksOfFourWarpsNoneIdle) {
  struct Want {
    int64_t N;
    int rows_per_warp;
    uint32_t blocks;
  };
  for (const Want& w : {Want{1, 1, 1}, Want{4, 1, 1}, Want{5, 1, 2}, Want{16, 4, 1}, Want{17, 4, 2},
                        Want{32, 8, 1}, Want{33, 8, 2}, Want{4096, 2, 512}}) {
    GemvOperands p{};
    p.N = w.N;
    const nvh::LaunchShape s = GemvScalar::shape(p, w.rows_per_warp);
    EXPECT_EQ(s.grid.x, w.blocks) << "N = " << w.N << ", rows_per_warp = " << w.rows_per_warp;
    EXPECT_EQ(s.block.x, 32 * GemvScalar::kWarpsPerBlock);
    EXPECT_TRUE(s.uses_collectives);
  }
  static_assert(GemvScalar::kWarpsPerBlock == 4, "the cases above count blocks of four warps");
}

// Past CUDA's 65535 rows of blocks (over a million rows of W at 16 a
// thread) each thread of prefill_vec8 loops over more rows than its 16. The
// geometry family reaches that with 2^20 + 1 rows of one 8-value chunk
// (property_tests); here, at 40 rows of 64 values on every backend, the
// launch is cut to one row of blocks by hand and each thread takes three
// turns (rows 0-15, 16-31, then 32-39). The scratch is the reference's
// dequantization.
TEST_P(OnBackend, PrefillVec8RowsPastTheGridAreDequantized) {
  std::mt19937 rng(5);
  const int64_t N = 40, K = 64;
  std::vector<uint8_t> packed(N * K / 2), scales(N * K / 16);
  for (auto& b : packed) b = static_cast<uint8_t>(rng());
  for (auto& s : scales) s = static_cast<uint8_t>(rng() % 0x7F);  // finite E4M3
  const float g = 0.375f;
  nvh::Buffer B(backend(), packed.size(), "B"), S(backend(), scales.size(), "scales"),
      G(backend(), sizeof g, "g"), scratch(backend(), N * K * 2, "scratch");
  B.upload(packed);
  S.upload(scales);
  G.upload(&g, sizeof g);
  backend().fill(scratch.data(), 0xEE, scratch.bytes());
  const DequantParams p{
      B.as<uint8_t>(), S.as<uint8_t>(),    G.as<float>(), scratch.as<uint16_t>(), N, K, 16,
      K / 16,          nvh::HalfKind::fp16};
  nvh::LaunchShape shape = PrefillVec8::shape(p);
  ASSERT_EQ(shape.grid.y, 3u);
  shape.grid.y = 1;
  nvh::launch<PrefillVec8>(backend(), shape, p);
  EXPECT_EQ(scratch.download_as<uint16_t>(N * K),
            ref::dequantize(packed.data(), scales.data(), g, N, K, 16, ref::Half::fp16));
}

TEST_P(OnBackend, PrefillScalarMatchesTheReference) {
  for (DType t : {DType::fp16, DType::bf16}) {
    run_and_check(backend(), spec(9, 16, 45, 15, t, true),
                  Route::prefill_scalar);  // odd block splits bytes
    run_and_check(backend(), spec(9, 16, 7, 16, t), Route::prefill_scalar);  // K < 8, odd K
    run_and_check(backend(), spec(9, 5, 13, 3, t), Route::prefill_scalar);
    run_and_check(backend(), spec(20, 3, 1, 1, t, true), Route::prefill_scalar);  // K = 1
    run_and_check(backend(), spec(9, 11, 100, 16, t), Route::prefill_scalar);     // K % 8 == 4
  }
  CaseSpec s = spec(16, 8, 64, 16, DType::fp16, true);
  s.b_offset = 2;  // B not 4-byte aligned
  run_and_check(backend(), s, Route::prefill_scalar);
  s.b_offset = 0;
  s.scratch_offset = 8;  // scratch not 16-byte aligned
  run_and_check(backend(), s, Route::prefill_scalar);
}

TEST_P(OnBackend, EmptyProblemsWriteBiasOrZero) {
  for (DType t : {DType::fp16, DType::bf16}) {
    const CaseSpec s = spec(5, 7, 0, 16, t, true);
    const CaseInputs in = make_inputs(s);
    const CaseRun run = run_and_check(backend(), s, Route::empty);
    EXPECT_EQ(run.Y.size(), 35u);
    for (int64_t m = 0; m < 5; ++m) {
      for (int64_t n = 0; n < 7; ++n) {
        const uint16_t b = in.bias[n] == 0x8000 ? 0 : in.bias[n];  // 0 + (-0) is +0
        EXPECT_EQ(run.Y[m * 7 + n], b);
      }
    }
    run_and_check(backend(), spec(5, 7, 0, 16, t), Route::empty);
    run_and_check(backend(), spec(0, 7, 32, 16, t), Route::empty);
    run_and_check(backend(), spec(3, 0, 32, 16, t), Route::empty);
  }
}

TEST_P(OnBackend, GemvScalarMatchesTheReference) {
  for (DType t : {DType::fp16, DType::bf16}) {
    // Rows per warp, then the M its accumulators are sized for (1, 2, 4, 8):
    // below rows per warp the activations stay in registers, at or above
    // it the weights. K = 96: 6 scale blocks, so lanes 6..31 load nothing.
    run_and_check(backend(), spec(1, 64, 96, 16, t, true), Route::gemv_scalar);   // rows4, M 1
    run_and_check(backend(), spec(2, 64, 1056, 16, t), Route::gemv_scalar);       // rows4, M 2
    run_and_check(backend(), spec(4, 12, 544, 16, t, true), Route::gemv_scalar);  // rows4, M 4
    run_and_check(backend(), spec(3, 66, 160, 16, t), Route::gemv_scalar);        // rows2
    run_and_check(backend(), spec(8, 7, 32, 16, t, true), Route::gemv_scalar);    // rows1
    run_and_check(backend(), spec(5, 1, 416, 16, t), Route::gemv_scalar);         // N = 1
    // 130 scale blocks: lanes 0 and 1 take five, the others four.
    run_and_check(backend(), spec(3, 8, 2080, 16, t, true), Route::gemv_scalar);
  }
}

TEST_P(OnBackend, GemvMmaMatchesTheReference) {
  for (DType t : {DType::fp16, DType::bf16}) {
    // A pipeline stage is 2 steps of 128 k; the row's last stage holds 1
    // (K = 128, 1152, 1408) or both (K = 256, 1024 below).
    run_and_check(backend(), spec(1, 64, 128, 16, t, true), Route::gemv_mma);
    run_and_check(backend(), spec(8, 40, 1152, 16, t), Route::gemv_mma);  // partial last tile
    run_and_check(backend(), spec(5, 3, 256, 16, t, true), Route::gemv_mma);
    run_and_check(backend(), spec(4, 20, 1408, 16, t), Route::gemv_mma);
  }
  // Enough tiles that one warp owns each, and K steps enough for the cp.async
  // pipeline's steady state (copies issued while earlier steps compute).
  run_and_check(backend(), spec(2, 2048, 1024, 16, DType::bf16, true), Route::gemv_mma);
}

// gemv_mma reads A from a pre-paired copy in shared memory when all of it
// fits (every case above), else through the L1: both sides of the limit,
// whole and half last stages, both kinds.
TEST_P(OnBackend, GemvMmaReadsActivationsPrePairedOrFromA) {
  ASSERT_TRUE(GemvMma::activations_fit(8, 2176));   // 8 * (2 * 2176 + 64) = 35328 bytes
  ASSERT_FALSE(GemvMma::activations_fit(8, 2304));  // 37376 bytes
  ASSERT_FALSE(GemvMma::activations_fit(3, 6272));
  for (DType t : {DType::fp16, DType::bf16}) {
    run_and_check(backend(), spec(8, 24, 2176, 16, t, true),
                  Route::gemv_mma);  // pre-paired, half last stage
    run_and_check(backend(), spec(8, 24, 2304, 16, t), Route::gemv_mma);  // from A
    run_and_check(backend(), spec(3, 40, 6272, 16, t, true),
                  Route::gemv_mma);  // from A, half last stage
  }
}

// The grids a call of route r on an M x N x K problem launches: its kernel,
// and the parts' sum where its plan splits K; the prefill routes' dequant
// and the GEMM step (a grid of its own on the host).
std::size_t grids_of(Route r, int64_t M, int64_t N, int64_t K) {
  switch (r) {
    case Route::gemv_mma:
      return GemvMmaSlices::slices_for(M, N, K) > 1 ? 2 : 1;
    case Route::prefill_fused: {
      const FusedPlan plan = prefill_fused_plan(M, N, K, true);  // the host executor has wgmma
      return plan.gemv_slices > 1 || (plan.k_slices > 1 && !plan.cluster_sum) ? 2 : 1;
    }
    case Route::prefill_vec8:
    case Route::prefill_scalar:
      return 2;
    default:
      return 1;
  }
}

// In exact mode every route lands on the rounded exact sum, hence on the
// same bits; on the host each route's call launches its kernels once
// (HostGridLog: a kernel launched twice gives the same bits in twice the time).
TEST_P(OnBackend, ExactModeGivesTheSameBitsOnEveryRoute) {
  const bool host = backend().kind() == nvh::BackendKind::host;
  for (DType t : {DType::fp16, DType::bf16}) {
    CaseSpec s = spec(8, 48, 256, 16, t, true);
    s.exact = true;
    std::vector<std::string> hashes;
    for (Route r : {Route::gemv_mma, Route::gemv_scalar, Route::prefill_fused, Route::prefill_vec8,
                    Route::prefill_scalar}) {
      s.options.force_route = r;
      std::optional<nvh::HostGridLog> log;
      if (host) log.emplace();
      hashes.push_back(run_and_check(backend(), s, r).y_sha256);
      if (log) {
        EXPECT_EQ(log->grids().size(), grids_of(r, 8, 48, 256)) << route_name(r);
      }
    }
    for (const auto& h : hashes) EXPECT_EQ(h, hashes.front());
  }
}

// The dequant contract on every (code, scale byte) pair, for many tensor
// scales: rows are scale bytes, each row one 16-value block holding codes
// 0..15. Random data only brushes the rounding cases where the order of the
// contract's fp32 products shows, so besides random tensor scales the sweep
// takes ones that put products on, and one fp32 ulp below, the midpoints
// between fp16 (2^-11) and bf16 (2^-8) neighbours, where one ulp of fp32
// error flips the final rounding.
TEST_P(OnBackend, DequantRoutesFollowTheContractOnEveryCodeAndScale) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> binade(-24, 4);
  std::vector<float> tensor_scales;
  for (int bits : {11, 8}) {
    const float midpoint = 1.0f + std::ldexp(1.0f, -bits);
    for (float g : {midpoint, std::nextafter(midpoint, 0.0f), std::nextafter(midpoint, 2.0f)}) {
      tensor_scales.push_back(g);
      tensor_scales.push_back(std::ldexp(g, -7));
    }
  }
  for (int trial = 0; trial < 24; ++trial)
    tensor_scales.push_back(std::ldexp(mantissa(rng), binade(rng)));
  for (float g : tensor_scales) {
    for (DType t : {DType::fp16, DType::bf16}) {
      CaseSpec s = spec(9, 254, 16, 16, t);
      CaseInputs in;
      in.A.assign(9 * 16, 0x3C00 /* 1.0 in fp16 */);
      if (t == DType::bf16) in.A.assign(9 * 16, 0x3F80);
      in.W.N = 254;
      in.W.K = 16;
      in.W.block_size = 16;
      in.W.global_scale = g;
      for (int b = 0, row = 0; b < 256; ++b) {
        if ((b & 0x7F) == 0x7F) continue;  // NaN scales are not data
        in.W.scales.push_back(static_cast<uint8_t>(b));
        for (int pair = 0; pair < 8; ++pair)
          in.W.packed.push_back(static_cast<uint8_t>((2 * pair) | ((2 * pair + 1) << 4)));
        ++row;
      }
      const Oracle oracle = make_oracle(s, in);
      for (Route r : {Route::prefill_vec8, Route::prefill_scalar}) {
        s.options.force_route = r;
        const CaseRun run = run_case(backend(), s, in);
        ASSERT_EQ(check_scratch(run, oracle), "") << route_name(r) << " g = " << in.W.global_scale;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, OnBackend, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

// ---- bad input ----

// One backend for every HostCall: a call's buffers may outlive the call
// they were moved from (c = HostCall()), never their backend.
nvh::Backend& host_backend() {
  static const std::unique_ptr<nvh::Backend> backend = nvh::make_host_backend();
  return *backend;
}

// Backend memory holding `count` copies of `value`: the host executor's
// memory checks let kernels touch nothing else, as a GPU would.
template <class T>
nvh::Buffer filled(std::size_t count, T value, const std::string& label) {
  nvh::Buffer b(host_backend(), count * sizeof(T), label);
  b.upload(std::vector<T>(count, value));
  return b;
}

struct HostCall {
  nvh::Backend* backend = &host_backend();
  nvh::Buffer A = filled<uint16_t>(4 * 32, 0x3C00, "A"), Y = filled<uint16_t>(4 * 8, 0, "Y");
  nvh::Buffer B = filled<uint8_t>(8 * 16, 0x22, "B"),
              scales = filled<uint8_t>(8 * 2, 0x38, "weight_scale");
  nvh::Buffer g = filled<float>(1, 1.f, "weight_scale_2");
  MatmulArgs args;
  HostCall() {
    args.A = {A.data(), {4, 32}, ElemType::fp16};
    args.B = {B.data(), {8, 16}, ElemType::e2m1x2};
    args.weight_scale = {scales.data(), {8, 2}, ElemType::e4m3};
    args.weight_scale_2 = {g.data(), {}, ElemType::fp32};
    args.Y = {Y.data(), {4, 8}, ElemType::fp16};
    args.block_size = 16;
  }
  std::string error() {
    try {
      run_matmul(*backend, args);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  }
};

void expect_error(HostCall& c, const std::string& fragment) {
  const std::string e = c.error();
  EXPECT_NE(e.find(fragment), std::string::npos) << "error was: " << e;
}

TEST(RunMatmulBadInput, TheUntouchedCallRuns) {
  HostCall c;
  EXPECT_EQ(c.error(), "no error");
}

TEST(RunMatmulBadInput, BlockSize) {
  HostCall c;
  c.args.block_size = 0;
  expect_error(c, "block_size = 0: must be positive");
  c.args.block_size = -16;
  expect_error(c, "block_size = -16: must be positive");
}

TEST(RunMatmulBadInput, BlockSizeLargerThanKGivesTheCorrectResult) {
  HostCall c;
  c.args.block_size = 64;
  c.args.weight_scale.shape = {8, 1};
  EXPECT_EQ(c.error(), "no error");
  // 32 values of 1.0 (code 2) times 1.0 (A) times scale 1.0 (E4M3 0x38).
  for (uint16_t y : c.Y.download_as<uint16_t>(4 * 8)) EXPECT_EQ(y, 0x5000) << "expected 32.0";
}

TEST(RunMatmulBadInput, SizeMismatches) {
  HostCall c;
  c.args.B.shape = {8, 15};
  expect_error(c, "B.shape = [8, 15]: expected [8, 16]");
  c = HostCall();
  c.args.weight_scale.shape = {8, 3};
  expect_error(c, "weight_scale.shape = [8, 3]: expected [8, 2]");
  c = HostCall();
  c.args.Y.shape = {4, 9};
  expect_error(c, "Y.shape = [4, 9]: expected [4, 8]");
  c = HostCall();
  c.args.bias = {c.A.data(), {7}, ElemType::fp16};
  expect_error(c, "bias.shape = [7]: expected [8]");
  c = HostCall();
  c.args.A.shape = {4, 32, 1};
  expect_error(c, "A.shape = [4, 32, 1]: expected rank 2");
  c = HostCall();
  c.args.weight_scale_2.shape = {2};
  expect_error(c, "weight_scale_2.shape = [2]: expected [1]");
}

TEST(RunMatmulBadInput, NegativeDims) {
  HostCall c;
  c.args.A.shape = {-4, 32};
  expect_error(c, "A.shape = [-4, 32]: negative dimension");
  c = HostCall();
  c.args.B.shape = {-8, 16};
  expect_error(c, "B.shape = [-8, 16]: negative dimension");
}

// -1 is the first negative value: the check's boundary (a `d < -1` slipped
// past the cases above; mutation testing, ci/mutation/).
TEST(RunMatmulBadInput, MinusOneIsANegativeDim) {
  HostCall c;
  c.args.A.shape = {-1, 32};
  expect_error(c, "A.shape = [-1, 32]: negative dimension");
  c = HostCall();
  c.args.B.shape = {8, -1};
  expect_error(c, "B.shape = [8, -1]: negative dimension");
}

TEST(RunMatmulBadInput, NullPointers) {
  HostCall c;
  c.args.A.data = nullptr;
  expect_error(c, "A.data = null with 128 elements");
  c = HostCall();
  c.args.B.data = nullptr;
  expect_error(c, "B.data = null with 128 elements");
  c = HostCall();
  c.args.weight_scale_2.data = nullptr;
  expect_error(c, "weight_scale_2.data = null");
  c = HostCall();
  c.args.Y.data = nullptr;
  expect_error(c, "Y.data = null with 32 elements");
}

TEST(RunMatmulBadInput, DtypeMismatch) {
  HostCall c;
  c.args.Y.type = ElemType::bf16;
  expect_error(c, "Y.type = bf16: expected fp16");
  c = HostCall();
  c.args.A.type = ElemType::fp32;
  expect_error(c, "A.type = fp32: expected fp16 or bf16");
  c = HostCall();
  c.args.weight_scale.type = ElemType::fp16;
  expect_error(c, "weight_scale.type = fp16: expected e4m3");
}

TEST(RunMatmulBadInput, MisalignedElementPointers) {
  HostCall c;
  c.args.Y.data = reinterpret_cast<uint8_t*>(c.Y.data()) + 1;
  expect_error(c, "not aligned to its 2-byte elements");
}

// Every pointer the alignment checks cover, misaligned by one byte, is named
// with its element size (a check that named the wrong tensor slipped past
// the Y-only case above; mutation testing, ci/mutation/).
TEST(RunMatmulBadInput, EachMisalignedPointerIsNamed) {
  std::vector<uint16_t> bias(8 + 1), scratch(8 * 32 + 1);
  const auto off = [](void* p) { return static_cast<void*>(static_cast<uint8_t*>(p) + 1); };
  {
    HostCall c;
    c.args.A.data = off(c.A.data());
    expect_error(c, "A.data = " + std::to_string(reinterpret_cast<uintptr_t>(c.args.A.data)) +
                        ": not aligned to its 2-byte elements");
  }
  {
    HostCall c;
    c.args.weight_scale_2.data = off(c.g.data());
    expect_error(c, "weight_scale_2.data = " +
                        std::to_string(reinterpret_cast<uintptr_t>(c.args.weight_scale_2.data)) +
                        ": not aligned to its 4-byte elements");
  }
  {
    HostCall c;
    c.args.bias = {off(bias.data()), {8}, ElemType::fp16};
    expect_error(c, "bias.data = " + std::to_string(reinterpret_cast<uintptr_t>(c.args.bias.data)) +
                        ": not aligned to its 2-byte elements");
  }
  {
    HostCall c;
    c.args.scratch = {off(scratch.data()), {8, 32}, ElemType::fp16};
    expect_error(
        c, "scratch.data = " + std::to_string(reinterpret_cast<uintptr_t>(c.args.scratch.data)) +
               ": not aligned to its 2-byte elements");
  }
}

// run_dequant (the benchmarks' and replay's dequant alone, untested until a
// mutant that made it return early survived) writes the contract's scratch
// with either prefill route.
TEST(RunDequant, EachPrefillRouteWritesTheReferenceScratch) {
  std::mt19937 rng(11);
  for (Route route : {Route::prefill_vec8, Route::prefill_scalar}) {
    HostCall c;
    std::vector<uint8_t> packed(8 * 16), scales(8 * 2);
    for (auto& b : packed) b = static_cast<uint8_t>(rng());
    for (auto& s : scales) s = static_cast<uint8_t>(rng() % 0x7F);  // finite E4M3
    const float g = 0.375f;
    c.B.upload(packed);
    c.scales.upload(scales);
    c.g.upload(&g, sizeof g);
    // Backend memory, so the host executor's memory checks know the scratch.
    nvh::Buffer scratch = filled<uint16_t>(8 * 32, 0xEEEE, "scratch");
    run_dequant(*c.backend, route, c.args, scratch.data());
    const std::vector<uint16_t> want =
        ref::dequantize(packed.data(), scales.data(), g, 8, 32, 16, ref::Half::fp16);
    EXPECT_EQ(scratch.download_as<uint16_t>(8 * 32), want) << route_name(route);
  }
}

TEST(RunMatmulBadInput, ElementCountsThatWouldOverflow64BitsAreRefusedByTheirDimension) {
  HostCall c;
  const int64_t huge = int64_t{1} << 40;
  c.args.A.shape = {huge, huge};  // 2^80 elements: M is named before any count is formed
  expect_error(c, "run_matmul: M = 1099511627776: larger than 2^31 - 1");
}

// Near INT64_MAX, ceil(K / 2) and ceil(K / block_size) once overflowed into
// negative expected shapes; the bad value is now named as itself.
TEST(RunMatmulBadInput, KNearInt64MaxIsNamed) {
  HostCall c;
  const int64_t K = INT64_MAX - 1;
  c.args.A.shape = {4, K};
  c.args.B.shape = {8, K / 2};
  expect_error(c, "run_matmul: K = 9223372036854775806: larger than 2^31 - 1");
}

TEST(RunMatmulBadInput, BlockSizeNearInt64MaxIsNamed) {
  HostCall c;
  c.args.block_size = INT64_MAX;
  expect_error(c, "run_matmul: block_size = 9223372036854775807: larger than 2^31 - 1");
}

TEST(RunMatmulBadInput, MAndNPast32BitsAreNamed) {
  HostCall c;
  c.args.A.shape = {int64_t{1} << 31, 32};
  expect_error(c, "run_matmul: M = 2147483648: larger than 2^31 - 1");
  c = HostCall();
  c.args.B.shape = {int64_t{3} << 31, 16};
  expect_error(c, "run_matmul: N = 6442450944: larger than 2^31 - 1");
}

TEST(RunMatmulBadInput, EveryMisalignedElementPointerIsNamed) {
  HostCall c;
  c.args.A.data = reinterpret_cast<uint8_t*>(c.A.data()) + 1;
  expect_error(
      c, "run_matmul: A.data = " + std::to_string(reinterpret_cast<uintptr_t>(c.args.A.data)) +
             ": not aligned to its 2-byte elements");
  c = HostCall();
  float g2[2] = {1.f, 1.f};
  c.args.weight_scale_2.data = reinterpret_cast<uint8_t*>(g2) + 2;
  expect_error(c, "run_matmul: weight_scale_2.data = " +
                      std::to_string(reinterpret_cast<uintptr_t>(c.args.weight_scale_2.data)) +
                      ": not aligned to its 4-byte elements");
  c = HostCall();
  std::vector<uint16_t> bias(9);
  c.args.bias = {reinterpret_cast<uint8_t*>(bias.data()) + 1, {8}, ElemType::fp16};
  expect_error(c, "run_matmul: bias.data = " +
                      std::to_string(reinterpret_cast<uintptr_t>(c.args.bias.data)) +
                      ": not aligned to its 2-byte elements");
}

TEST(RunMatmulBadInput, BiasAndScratchClaimsAreChecked) {
  HostCall c;
  c.args.bias = {nullptr, {8}, ElemType::fp16};
  expect_error(c, "run_matmul: bias.data = null with 8 elements");
  c = HostCall();
  std::vector<uint16_t> bias(8);
  c.args.bias = {bias.data(), {8}, ElemType::bf16};
  expect_error(c, "run_matmul: bias.type = bf16: expected fp16");
  c = HostCall();
  std::vector<uint16_t> scratch(8 * 32);
  c.args.scratch = {scratch.data(), {8, 31}, ElemType::fp16};
  expect_error(c, "run_matmul: scratch.shape = [8, 31]: expected [8, 32]");
  c = HostCall();
  c.args.weight_scale_2.type = ElemType::fp16;
  expect_error(c, "run_matmul: weight_scale_2.type = fp16: expected fp32");
}

TEST(RunMatmulBadInput, DimensionsPast32Bits) {
  HostCall c;
  const int64_t big = int64_t{1} << 31;
  c.args.A.shape = {4, big};
  c.args.B.shape = {8, big / 2};
  c.args.weight_scale.shape = {8, big / 16};
  expect_error(c, "K = 2147483648: larger than 2^31 - 1");
}

TEST(RunMatmulBadInput, ForcedRouteThatCannotRun) {
  HostCall c;
  Options o;
  o.force_route = Route::gemv_mma;  // K = 32 is not a multiple of 128
  try {
    run_matmul(*c.backend, c.args, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("K % 128 == 0 (K = 32) fails"), std::string::npos)
        << e.what();
  }
}

TEST(RunMatmulBadInput, NativeRouteOffSm12xIsReportedAsHardwareGated) {
  HostCall c;
  Options o;
  o.native_opt_in = true;
  Caps sm120;
  sm120.sm = 120;
  sm120.native_fp4 = true;
  o.simulated_caps = sm120;
  c.A = filled<uint16_t>(16 * 32, 0, "A");
  c.Y = filled<uint16_t>(16 * 32, 0, "Y");
  c.B = filled<uint8_t>(32 * 16, 0, "B");
  c.scales = filled<uint8_t>(32 * 2, 0, "weight_scale");
  c.args.A = {c.A.data(), {16, 32}, ElemType::fp16};
  c.args.B = {c.B.data(), {32, 16}, ElemType::e2m1x2};
  c.args.weight_scale = {c.scales.data(), {32, 2}, ElemType::e4m3};
  c.args.Y = {c.Y.data(), {16, 32}, ElemType::fp16};
  try {
    run_matmul(*c.backend, c.args, o);
    FAIL();
  } catch (const RouteUnavailable& e) {
    EXPECT_EQ(e.route(), Route::native_sm120);
    EXPECT_NE(std::string(e.what()).find("hardware-gated"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nvfp4
