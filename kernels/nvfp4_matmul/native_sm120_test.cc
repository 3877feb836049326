// native_sm120: the activation quantizer bit for bit against the reference
// quantizer (helpers, then the kernels on every backend), the weight-scale
// re-tiling, the route's decisions with simulated caps, and the end-to-end
// matmul where a device has it (skipped, naming the missing capability,
// everywhere else).
#include "kernels/nvfp4_matmul/native_sm120.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "kernels/nvfp4_matmul/dispatch.h"
#include "kernels/nvfp4_matmul/native_sm120.cuh"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "kernels/nvfp4_matmul/scale_layout.h"
#include "properties/nvfp4_matmul/matmul_case.h"
#include "reference/nvfp4_matmul/e2m1.h"
#include "reference/nvfp4_matmul/e4m3.h"
#include "reference/nvfp4_matmul/float16.h"
#include "reference/nvfp4_matmul/packing.h"
#include "reference/nvfp4_matmul/quantize.h"

namespace nvfp4 {
namespace {

ref::Half ref_half(DType t) { return t == DType::fp16 ? ref::Half::fp16 : ref::Half::bf16; }

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Every fp16 and bf16 value as a float, a stride through all float bit
// patterns, and each E2M1 tie with its float neighbours; NaNs left out (the
// reference rejects them).
std::vector<float> float_sweep() {
  std::vector<float> out;
  for (uint32_t b = 0; b < 65536; ++b) {
    out.push_back(
        static_cast<float>(ref::half_to_double(static_cast<uint16_t>(b), ref::Half::fp16)));
    out.push_back(
        static_cast<float>(ref::half_to_double(static_cast<uint16_t>(b), ref::Half::bf16)));
  }
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4093)
    out.push_back(from_bits(static_cast<uint32_t>(u)));
  for (float tie : {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.0f, 7.0f}) {
    for (float x : {tie, std::nextafter(tie, 0.f), std::nextafter(tie, 100.f)}) {
      out.push_back(x);
      out.push_back(-x);
    }
  }
  std::vector<float> finite_or_inf;
  for (float f : out) {
    if (!std::isnan(f)) finite_or_inf.push_back(f);
  }
  return finite_or_inf;
}

// ---- the helpers, bit for bit against the reference's steps ----

TEST(NativeQuantizerHelpers, EncodeE2m1MatchesTheReferenceOnTheSweep) {
  int64_t mismatches = 0;
  for (float f : float_sweep()) {
    if (encode_e2m1(f) != ref::float_to_e2m1(f) && mismatches++ < 8) {
      ADD_FAILURE() << std::hexfloat << f << ": kernel " << int(encode_e2m1(f)) << ", reference "
                    << int(ref::float_to_e2m1(f));
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(NativeQuantizerHelpers, GlobalScaleMatchesTheReference) {
  std::vector<float> amaxes = {0.f, from_bits(1), from_bits(2), from_bits(0x00800000),
                               1.f, 2688.f,       65504.f,      std::numeric_limits<float>::max()};
  for (float f : float_sweep()) {
    if (f >= 0 && std::isfinite(f)) amaxes.push_back(f);
  }
  for (float a : amaxes) {
    ASSERT_EQ(bits_of(act_global_scale(a)), bits_of(ref::global_scale_for_amax(a)))
        << std::hexfloat << a;
  }
}

// Block scales and codes over amax / g pairs spanning every binade a block
// and a tensor scale can reach, subnormal g included.
TEST(NativeQuantizerHelpers, BlockScaleAndCodesMatchTheReference) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<uint32_t> bits(0, 0x7F7FFFFFu);  // finite, non-negative floats
  for (int i = 0; i < 200000; ++i) {
    const float g = ref::global_scale_for_amax(from_bits(bits(rng)));
    const float block_amax = from_bits(bits(rng));
    ASSERT_EQ(act_block_scale(block_amax, g), ref::block_scale_for_amax(block_amax, g))
        << std::hexfloat << block_amax << " / 6 * " << g;
    const float sp = ref::e4m3_to_float(act_block_scale(block_amax, g)) * g;
    const float x = from_bits(bits(rng) | (i % 2 ? 0x80000000u : 0u));
    ASSERT_EQ(act_code(x, sp), ref::encode_element(x, sp)) << std::hexfloat << x << " / " << sp;
  }
  EXPECT_EQ(act_code(-0.f, 0.f), 0x8);
  EXPECT_EQ(act_code(0.f, 0.f), 0x0);
  EXPECT_EQ(act_code(-3.f, 0.f), 0x8);
}

// ---- the kernels, on every backend this build has ----

using nvh::backend_names;
class NativeOnBackend : public nvh::OnBackend {};

// Activations whose 16-value blocks are of mixed kinds: all zero (signed
// zeros too), ordinary values a few binades apart, values so small next to
// the tensor amax that their scale rounds to E4M3 zero or a subnormal, and
// lone outliers.
std::vector<uint16_t> mixed_activations(int64_t M, int64_t K, DType t, uint64_t seed) {
  std::mt19937_64 rng(seed * 1000003 + M * 131 + K);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> kind(0, 5), binade(-6, 6);
  const ref::Half h = ref_half(t);
  std::vector<uint16_t> A(static_cast<std::size_t>(M * K));
  for (int64_t m = 0; m < M; ++m) {
    const bool zero_row = m % 7 == 3;
    for (int64_t b = 0; b < K / 16; ++b) {
      const int k = zero_row ? 0 : kind(rng);
      const double gain = std::ldexp(1.0, binade(rng));
      for (int64_t j = 0; j < 16; ++j) {
        double v = normal(rng) * gain;
        if (k == 0) v = (j % 3 == 0) ? -0.0 : 0.0;
        if (k == 1) v *= 1e-4;                               // scale near E4M3's bottom
        if (k == 2) v *= (t == DType::fp16 ? 1e-7 : 1e-30);  // scale rounds to zero
        if (k == 3 && j != 5) v = 0.0;                       // one outlier in a zero block
        A[static_cast<std::size_t>(m * K + b * 16 + j)] = ref::round_to_half(v, h);
      }
    }
  }
  return A;
}

struct DeviceQuant {
  std::vector<uint8_t> packed, scales;
  float g = 0.f;
};

// Runs quantize_activations on the backend and reads everything back.
DeviceQuant run_quantizer(nvh::Backend& backend, const std::vector<uint16_t>& A, int64_t M,
                          int64_t K, DType t, ScaleOrder order) {
  const int64_t cols = K / 16;
  const std::size_t scale_bytes = static_cast<std::size_t>(
      order == ScaleOrder::tiled_128x4 ? tiled_scale_bytes(M, cols) : M * cols);
  nvh::Buffer a(backend, A.size() * 2), packed(backend, static_cast<std::size_t>(M * K / 2)),
      scales(backend, scale_bytes), g(backend, sizeof(float));
  a.upload(A);
  backend.fill(packed.data(), 0xEE, packed.bytes());  // poison: any byte left unwritten shows
  backend.fill(scales.data(), 0xEE, scales.bytes());
  quantize_activations(backend, a.as<uint16_t>(), M, K, t, order,
                       {packed.as<uint8_t>(), scales.as<uint8_t>(), g.as<float>()});
  DeviceQuant out;
  out.packed = packed.download_as<uint8_t>(packed.bytes());
  out.scales = scales.download_as<uint8_t>(scale_bytes);
  out.g = g.download_as<float>(1)[0];
  return out;
}

ref::QuantizedWeight reference_quant(const std::vector<uint16_t>& A, int64_t M, int64_t K,
                                     DType t) {
  std::vector<float> f(A.size());
  for (std::size_t i = 0; i < A.size(); ++i)
    f[i] = static_cast<float>(ref::half_to_double(A[i], ref_half(t)));
  return ref::quantize_nvfp4(f.data(), M, K, 16);
}

// "" when the kernel's output equals the reference's bit for bit.
std::string compare(const DeviceQuant& got, const ref::QuantizedWeight& want, int64_t M, int64_t K,
                    ScaleOrder order) {
  std::ostringstream msg;
  if (bits_of(got.g) != bits_of(want.global_scale)) {
    msg << "global scale " << std::hexfloat << got.g << ", reference " << want.global_scale << "; ";
  }
  if (got.packed != want.packed) msg << "packed codes differ; ";
  const std::vector<uint8_t> scales = order == ScaleOrder::tiled_128x4
                                          ? swizzle_scales_to_tiled(want.scales.data(), M, K / 16)
                                          : want.scales;
  if (got.scales != scales) msg << "scales differ; ";
  return msg.str();
}

TEST_P(NativeOnBackend, QuantizerMatchesTheReferenceBitForBit) {
  const int64_t Ks[] = {16, 48, 112, 256, 512};
  for (DType t : {DType::fp16, DType::bf16}) {
    for (int64_t M = 1; M <= 40; ++M) {
      for (int i = 0; i < 2; ++i) {
        const int64_t K = Ks[(M + 3 * i) % 5];
        const std::vector<uint16_t> A = mixed_activations(M, K, t, i);
        const ScaleOrder order = i == 0 ? ScaleOrder::row_major : ScaleOrder::tiled_128x4;
        const DeviceQuant got = run_quantizer(backend(), A, M, K, t, order);
        EXPECT_EQ(compare(got, reference_quant(A, M, K, t), M, K, order), "")
            << dtype_name(t) << " M=" << M << " K=" << K << (i ? " tiled" : " row-major");
      }
    }
  }
}

// A larger tiled case crossing a 128-row tile boundary and a ragged column tile.
TEST_P(NativeOnBackend, QuantizerTilesAcrossTileBoundaries) {
  for (DType t : {DType::fp16, DType::bf16}) {
    const int64_t M = 130, K = 96;  // 6 scale columns: one full, one half column tile
    const std::vector<uint16_t> A = mixed_activations(M, K, t, 9);
    EXPECT_EQ(compare(run_quantizer(backend(), A, M, K, t, ScaleOrder::tiled_128x4),
                      reference_quant(A, M, K, t), M, K, ScaleOrder::tiled_128x4),
              "");
  }
}

TEST_P(NativeOnBackend, FullyZeroActivationsGetUnitScaleAndSignedZeroCodes) {
  for (DType t : {DType::fp16, DType::bf16}) {
    std::vector<uint16_t> A(5 * 64, 0);
    for (std::size_t i = 0; i < A.size(); i += 3) A[i] = 0x8000;  // -0.0 in both formats
    const DeviceQuant got = run_quantizer(backend(), A, 5, 64, t, ScaleOrder::row_major);
    EXPECT_EQ(got.g, 1.0f);
    EXPECT_EQ(got.scales, std::vector<uint8_t>(5 * 4, 0));
    EXPECT_EQ(compare(got, reference_quant(A, 5, 64, t), 5, 64, ScaleOrder::row_major), "");
    EXPECT_EQ(ref::unpack_e2m1_rows(got.packed, 5, 64)[0], 0x8);  // -0.0 keeps its sign
  }
}

// The extremes of each format: fp16's largest and subnormal values, bf16's
// widest range, where the tensor scale itself becomes an fp32 subnormal.
TEST_P(NativeOnBackend, QuantizerMatchesTheReferenceAtTheFormatsExtremes) {
  const std::vector<std::pair<DType, std::vector<uint16_t>>> cases = {
      {DType::fp16, {0x7BFF, 0xFBFF, 0x0001, 0x8001, 0x03FF, 0x3C00, 0x0400, 0x7800}},
      {DType::bf16, {0x7F7F, 0x0001, 0x8001, 0x3F80, 0x0080, 0x1000, 0xFF7F, 0x2000}},
      {DType::bf16,
       {0x0001, 0x0002, 0x8003, 0x0000, 0x0040, 0x0011, 0x0005, 0x8000}},  // all subnormal
  };
  for (const auto& [t, pattern] : cases) {
    std::vector<uint16_t> A(3 * 32);
    for (std::size_t i = 0; i < A.size(); ++i) A[i] = pattern[(i * 5) % pattern.size()];
    EXPECT_EQ(compare(run_quantizer(backend(), A, 3, 32, t, ScaleOrder::row_major),
                      reference_quant(A, 3, 32, t), 3, 32, ScaleOrder::row_major),
              "")
        << dtype_name(t);
  }
}

TEST_P(NativeOnBackend, EmptyActivationsStillWriteTheTensorScale) {
  nvh::Buffer g(backend(), sizeof(float));
  backend().fill(g.data(), 0xEE, sizeof(float));
  quantize_activations(backend(), nullptr, 0, 32, DType::fp16, ScaleOrder::row_major,
                       {nullptr, nullptr, g.as<float>()});
  EXPECT_EQ(g.download_as<float>(1)[0], 1.0f);  // the reference's g for amax 0
}

// K = 0 is a multiple of 16 (an empty reduction): rows with no columns
// quantize to nothing, and the tensor scale is still written.
TEST_P(NativeOnBackend, ZeroColumnsAreAnEmptyProblemNotAnError) {
  nvh::Buffer g(backend(), sizeof(float));
  backend().fill(g.data(), 0xEE, sizeof(float));
  quantize_activations(backend(), nullptr, 3, 0, DType::fp16, ScaleOrder::row_major,
                       {nullptr, nullptr, g.as<float>()});
  EXPECT_EQ(g.download_as<float>(1)[0], 1.0f);  // the reference's g for amax 0
}

TEST_P(NativeOnBackend, RetileWritesTheTiledLayoutPaddingIncluded) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> byte(1, 255);
  for (int64_t rows : {1, 32, 127, 128, 129, 300}) {
    for (int64_t cols : {1, 2, 4, 6, 32}) {
      std::vector<uint8_t> scales(static_cast<std::size_t>(rows * cols));
      for (auto& s : scales) s = static_cast<uint8_t>(byte(rng));
      const std::size_t bytes = static_cast<std::size_t>(tiled_scale_bytes(rows, cols));
      nvh::Buffer src(backend(), scales.size()), dst(backend(), bytes);
      src.upload(scales);
      backend().fill(dst.data(), 0xAB, bytes);  // poison: padding must come back zero
      retile_scales(backend(), src.as<uint8_t>(), rows, cols, dst.as<uint8_t>());
      backend().synchronize();
      EXPECT_EQ(dst.download_as<uint8_t>(bytes), swizzle_scales_to_tiled(scales.data(), rows, cols))
          << rows << "x" << cols;
    }
  }
}

TEST_P(NativeOnBackend, DeviceCapsClaimNativeFp4OnlyOnSm10xOr12x) {
  const Caps caps = device_caps(backend());
  const int major = backend().caps().sm_major;
  if (backend().kind() == nvh::BackendKind::host) {
    EXPECT_FALSE(caps.native_fp4);
  } else if (major != 10 && major != 12) {
    EXPECT_FALSE(caps.native_fp4) << "sm_" << caps.sm;
  }
  EXPECT_EQ(caps.native_fp4, native_fp4_available(backend()));
}

// Where the device lacks the route, asking for it (with simulated sm_120
// caps, so the dispatcher picks it) fails naming the missing capability.
TEST_P(NativeOnBackend, NativeRouteIsHardwareGatedNamingTheCapability) {
  const std::string missing = native_sm120_missing_capability(device_caps(backend()));
  if (missing.empty())
    GTEST_SKIP() << "this device has native FP4: the end-to-end test runs the route";
  CaseSpec s;
  s.M = 16;
  s.N = 32;
  s.K = 64;
  s.options.native_opt_in = true;
  Caps sm120;
  sm120.sm = 120;
  sm120.native_fp4 = true;
  s.options.simulated_caps = sm120;
  try {
    run_case(backend(), s, make_inputs(s));
    FAIL() << "native_sm120 ran on " << backend().arch();
  } catch (const RouteUnavailable& e) {
    EXPECT_EQ(e.route(), Route::native_sm120);
    EXPECT_EQ(e.missing_capability(), missing);
    EXPECT_NE(std::string(e.what()).find("hardware-gated here: needs " + missing),
              std::string::npos)
        << e.what();
  }
}

// Called past the dispatcher on a backend without the hardware, the route
// still quantizes, re-tiles and describes the matmul, then reports what is
// missing: on a GPU, no cuBLASLt algorithm; on the host, no GPU at all.
TEST_P(NativeOnBackend, RunningTheRouteWithoutTheHardwareThrowsRouteUnavailable) {
  if (native_fp4_available(backend()))
    GTEST_SKIP() << "this device has native FP4: the end-to-end test runs the route";
  const int64_t M = 16, N = 32, K = 64;
  CaseSpec s;
  s.M = M;
  s.N = N;
  s.K = K;
  s.bias = true;
  const CaseInputs in = make_inputs(s);
  nvh::Buffer a(backend(), in.A.size() * 2), b(backend(), in.W.packed.size()),
      scales(backend(), in.W.scales.size()), g(backend(), sizeof(float)),
      bias(backend(), in.bias.size() * 2), y(backend(), M * N * 2);
  a.upload(in.A);
  b.upload(in.W.packed);
  scales.upload(in.W.scales);
  g.upload(&in.W.global_scale, sizeof(float));
  bias.upload(in.bias);
  MatmulArgs args;
  args.A = {a.data(), {M, K}, ElemType::fp16};
  args.B = {b.data(), {N, K / 2}, ElemType::e2m1x2};
  args.weight_scale = {scales.data(), {N, K / 16}, ElemType::e4m3};
  args.weight_scale_2 = {g.data(), {}, ElemType::fp32};
  args.bias = {bias.data(), {N}, ElemType::fp16};
  args.Y = {y.data(), {M, N}, ElemType::fp16};
  const std::string expected =
      backend().kind() == nvh::BackendKind::host
          ? "a CUDA device (the host backend has no block-scaled FP4 matmul)"
          : "a cuBLASLt block-scaled FP4 algorithm for M = 16, N = 32, K = 64, fp16, bias";
  try {
    run_native_sm120(backend(), args, describe_problem(args));
    FAIL() << "the route ran on " << backend().arch();
  } catch (const RouteUnavailable& e) {
    EXPECT_EQ(e.missing_capability().substr(0, expected.size()), expected) << e.what();
  }
}

// ---- end to end, on a device that has the block-scaled FP4 matmul ----

// One ulp of the output type at |x| (the final rounding from fp32).
double output_ulp(double x, DType t) {
  const int mantissa_bits = t == DType::fp16 ? 10 : 7;
  const int min_exponent = t == DType::fp16 ? -14 : -126;
  const int e = x == 0 ? min_exponent : std::max(min_exponent, std::ilogb(x));
  return std::ldexp(1.0, e - mantissa_bits);
}

// Dequantized NVFP4 value k of row n, exact in fp64: e2m1 * float(e4m3) * g
// has at most 2 + 4 + 24 significant bits.
double dequant64(const ref::QuantizedWeight& q, int64_t n, int64_t k) {
  const uint8_t code = ref::packed_code_at(q.packed.data(), q.K, n, k);
  return static_cast<double>(ref::e2m1_to_float(code)) *
         ref::e4m3_to_float(q.scales[n * (q.K / 16) + k / 16]) * q.global_scale;
}

// The native output is not comparable bit for bit with the other routes: the
// activations are quantized. It is bounded against the fp64 product of the
// dequantized quantized activations and weights (+ bias):
//   |y - y64| <= ulp(y64) + (K + 4) * 2^-23 * S,   S = sum_k |a_k w_k| + |bias|
//   * ulp(y64): the rounding of the fp32 result to fp16/bf16;
//   * each product (e2m1 * e4m3)^2 has <= 12 significant bits: exact in fp32;
//   * K * 2^-23 * S: the fp32 sum in any order, one fp32 ulp per add (which
//     also covers an adder that truncates);
//   * 4 * 2^-23 * S: alpha = g_a * g_w rounded, its multiply, the bias add, slack.
std::string check_native_bound(const CaseSpec& s, const CaseInputs& in, const CaseRun& run) {
  const ref::QuantizedWeight aq = reference_quant(in.A, s.M, s.K, s.dtype);
  const ref::Half h = ref_half(s.dtype);
  for (int64_t m = 0; m < s.M; ++m) {
    for (int64_t n = 0; n < s.N; ++n) {
      double y = in.bias.empty() ? 0.0 : ref::half_to_double(in.bias[n], h);
      double S = std::fabs(y);
      for (int64_t k = 0; k < s.K; ++k) {
        const double p = dequant64(aq, m, k) * dequant64(in.W, n, k);
        y += p;
        S += std::fabs(p);
      }
      const double got = ref::half_to_double(run.Y[m * s.N + n], h);
      const double bound = output_ulp(std::fabs(y), s.dtype) + (s.K + 4) * std::ldexp(S, -23);
      if (!(std::fabs(got - y) <= bound)) {  // also catches NaN (the unwritten poison)
        std::ostringstream msg;
        msg << "Y[" << m << "," << n << "] = " << got << ", fp64 reference " << y << ": error "
            << std::fabs(got - y) << " exceeds " << bound;
        return msg.str();
      }
    }
  }
  return "";
}

// A comparison of zeros proves nothing: A and Y must each hold a non-zero.
std::string check_not_all_zero(const CaseInputs& in, const CaseRun& run) {
  const auto nonzero = [](const std::vector<uint16_t>& v) {
    for (uint16_t b : v) {
      if (b & 0x7FFF) return true;
    }
    return false;
  };
  if (!nonzero(in.A)) return "A is all zero";
  if (!nonzero(run.Y)) return "Y is all zero";
  return "";
}

TEST_P(NativeOnBackend, NativeMatchesTheDequantizedReferenceWithinItsBound) {
  const std::string missing = native_sm120_missing_capability(device_caps(backend()));
  if (!missing.empty()) GTEST_SKIP() << "native_sm120 needs " << missing;
  struct Shape {
    int64_t M, N, K;
    bool bias;
  };
  for (DType t : {DType::fp16, DType::bf16}) {
    for (const Shape& sh : {Shape{9, 32, 32, false}, Shape{40, 96, 96, true},
                            Shape{130, 256, 512, true}, Shape{17, 64, 64, false}}) {
      CaseSpec s;
      s.M = sh.M;
      s.N = sh.N;
      s.K = sh.K;
      s.dtype = t;
      s.bias = sh.bias;
      s.options.native_opt_in = true;
      const CaseInputs in = make_inputs(s);
      const CaseRun run = run_case(backend(), s, in);
      EXPECT_EQ(run.decision.route, Route::native_sm120) << s.name() << ": " << run.decision.detail;
      EXPECT_EQ(check_native_bound(s, in, run), "") << s.name();
      EXPECT_EQ(check_guards(run), "") << s.name();
      EXPECT_EQ(check_not_all_zero(in, run), "") << s.name();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, NativeOnBackend, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return info.param; });

// ---- decisions with simulated sm_12x caps ----

Problem problem(int64_t M, int64_t N, int64_t K) {
  Problem p;
  p.M = M;
  p.N = N;
  p.K = K;
  p.block_size = 16;
  return p;
}

Caps caps(int sm, bool native_fp4) {
  Caps c;
  c.sm = sm;
  c.native_fp4 = native_fp4;
  c.backend = "cuda";
  return c;
}

TEST(NativeDecisions, EverySm12xWithFp4TakesTheRouteWhenOptedIn) {
  Options o;
  o.native_opt_in = true;
  for (int sm : {120, 121, 129}) {
    const Decision d = explain_route(problem(16, 64, 256), caps(sm, true), o);
    EXPECT_EQ(d.route, Route::native_sm120) << sm << ": " << d.detail;
    EXPECT_EQ(d.reason, "native_opted_in");
    EXPECT_EQ(d.variant, "cublaslt_block_scaled_fp4");
  }
}

TEST(NativeDecisions, NotOptedInTheRouteIsNeverTaken) {
  EXPECT_EQ(select_route(problem(16, 64, 256), caps(120, true), {}).route, Route::prefill_fused);
}

TEST(NativeDecisions, Sm12xWithoutFp4IsPassedOverNamingThePredicate) {
  Options o;
  o.native_opt_in = true;
  const Decision d = explain_route(problem(16, 64, 256), caps(120, false), o);
  EXPECT_EQ(d.route, Route::prefill_fused);
  EXPECT_NE(d.detail.find("passed over: block-scaled FP4 matmul available fails"),
            std::string::npos)
      << d.detail;
  o.force_route = Route::native_sm120;
  try {
    select_route(problem(16, 64, 256), caps(120, false), o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("block-scaled FP4 matmul available fails"),
              std::string::npos)
        << e.what();
  }
}

// sm_100 has the cuBLASLt kernels too, but DESIGN.md's route is sm 12.x only.
TEST(NativeDecisions, Sm100WithFp4IsNotTheSm120Route) {
  Options o;
  o.native_opt_in = true;
  const Decision d = explain_route(problem(16, 64, 256), caps(100, true), o);
  EXPECT_EQ(d.route, Route::prefill_fused);
  EXPECT_NE(d.detail.find("sm 12.x (sm = 100) fails"), std::string::npos) << d.detail;
  EXPECT_EQ(native_sm120_missing_capability(caps(100, true)),
            "an sm_12x GPU (this device is sm_100)");
}

TEST(NativeDecisions, ForcingTheRouteOnSm120WithFp4TakesIt) {
  Options o;
  o.force_route = Route::native_sm120;
  const Decision d = explain_route(problem(4, 32, 32), caps(120, true), o);  // M <= 8 too
  EXPECT_EQ(d.route, Route::native_sm120);
  EXPECT_EQ(d.reason, "forced");
}

TEST(NativeDecisions, TheHostBackendNeverClaimsNativeFp4) {
  const auto host = nvh::make_host_backend();
  EXPECT_FALSE(native_fp4_available(*host));
  EXPECT_FALSE(device_caps(*host).native_fp4);
  EXPECT_FALSE(native_sm120_missing_capability(device_caps(*host)).empty());
}

TEST(NativeQuantizerArgs, BadSizesAreNamed) {
  const auto host = nvh::make_host_backend();
  float g = 0;
  uint8_t byte = 0;
  uint16_t a = 0;
  const QuantizedActivations out{&byte, &byte, &g};
  try {
    quantize_activations(*host, &a, 1, 24, DType::fp16, ScaleOrder::row_major, out);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "quantize_activations: K = 24: must be a non-negative multiple of 16"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(quantize_activations(*host, &a, -1, 16, DType::fp16, ScaleOrder::row_major, out),
               std::invalid_argument);
  EXPECT_THROW(quantize_activations(*host, nullptr, 1, 16, DType::fp16, ScaleOrder::row_major, out),
               std::invalid_argument);
  EXPECT_THROW(quantize_activations(*host, &a, 1, 16, DType::fp16, ScaleOrder::row_major,
                                    {&byte, &byte, nullptr}),
               std::invalid_argument);
}

}  // namespace
}  // namespace nvfp4
