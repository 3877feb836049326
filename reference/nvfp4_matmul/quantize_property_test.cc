// Property tests (RapidCheck hosted in GoogleTest) for the codecs and the quantizer.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "dequant.h"
#include "e2m1.h"
#include "e4m3.h"
#include "float16.h"
#include "quantize.h"

namespace nvfp4::ref {
namespace {

// ---------------------------------------------------------------------------------------------
// Codecs: encode(decode(c)) == c.

RC_GTEST_PROP(CodecProperties, E2m1EncodeInvertsDecode, ()) {
  const auto code = static_cast<uint8_t>(*rc::gen::inRange(0, 16));
  RC_ASSERT(float_to_e2m1(e2m1_to_float(code)) == code);
}

RC_GTEST_PROP(CodecProperties, E4m3EncodeInvertsDecodeForNonNaNBytes, ()) {
  const auto byte = static_cast<uint8_t>(
      *rc::gen::suchThat(rc::gen::inRange(0, 256), [](int b) { return (b & 0x7F) != 0x7F; }));
  RC_ASSERT(float_to_e4m3(e4m3_to_float(byte)) == byte);
}

// ---------------------------------------------------------------------------------------------
// Matrices. Each block of each row draws its own binade 2^e (e in [min_exp, max_exp]) and its
// elements are integers in [-2^20, 2^20] times 2^(e-20): blocks of very different magnitudes
// in one matrix (so some block scales are E4M3 subnormals or zero), 20-bit mantissas (so the
// roundings are not all trivial). One block in `zero_one_in` (on average) is all
// zeros of random sign.

struct Matrix {
  int64_t N = 0, K = 0, block_size = 0;
  std::vector<float> W;
  float at(int64_t n, int64_t k) const { return W[static_cast<std::size_t>(n * K + k)]; }
};

std::vector<float> draw_block(int64_t len, int min_exp, int max_exp, int zero_one_in) {
  std::vector<float> out;
  if (*rc::gen::inRange(0, zero_one_in) == 0) {
    for (int64_t i = 0; i < len; ++i) out.push_back(*rc::gen::arbitrary<bool>() ? -0.0f : 0.0f);
    return out;
  }
  const int e = *rc::gen::inRange(min_exp, max_exp + 1);
  for (int64_t i = 0; i < len; ++i) {
    const int m = *rc::gen::inRange(-(1 << 20), (1 << 20) + 1);
    out.push_back(static_cast<float>(std::ldexp(static_cast<double>(m), e - 20)));
  }
  return out;
}

Matrix draw_matrix(int min_exp, int max_exp, int zero_one_in) {
  Matrix m;
  m.N = *rc::gen::inRange<int64_t>(1, 5);
  m.K = *rc::gen::inRange<int64_t>(1, 70);
  m.block_size = *rc::gen::element<int64_t>(16, 32, 1, 3, 8, 64, 100);
  for (int64_t n = 0; n < m.N; ++n) {
    for (int64_t start = 0; start < m.K; start += m.block_size) {
      const std::vector<float> block =
          draw_block(std::min(m.block_size, m.K - start), min_exp, max_exp, zero_one_in);
      m.W.insert(m.W.end(), block.begin(), block.end());
    }
  }
  return m;
}

QuantizedWeight quantize(const Matrix& m) {
  return quantize_nvfp4(m.W.data(), m.N, m.K, m.block_size);
}

float matrix_amax(const Matrix& m) {
  float a = 0;
  for (float w : m.W) a = std::max(a, std::fabs(w));
  return a;
}

double block_amax(const Matrix& m, int64_t n, int64_t k) {
  const int64_t start = k / m.block_size * m.block_size, end = std::min(m.K, start + m.block_size);
  double a = 0;
  for (int64_t j = start; j < end; ++j) a = std::max(a, std::fabs(static_cast<double>(m.at(n, j))));
  return a;
}

// ---------------------------------------------------------------------------------------------
// Error bound of dequant(quantize(W)) for one element w in a block with amax A, global scale g.
//
// Let S = fl(float(s) * g) be the block's scale product and x = w / S. The quantizer stores the
// E2M1 code nearest to x (saturating at 6), and dequant returns D = rnd_dtype(fl(e2m1 * S)).
//
// 1. E2M1 step. The grid {0, .5, 1, 1.5, 2, 3, 4, 6} has half-steps 0.25 on [0, 2], 0.5 on
//    [2, 4], 1 on [4, 6]; each is <= max(0.25, |x|/4). Above 6 the error is |x| - 6.
//    So |e2m1 * S - w| <= max(S/4, |w|/4, |w| - 6S).
// 2. E4M3 scale rounding, normal scales. The ideal scale is s* = A / (6g) (A maps to 6). If
//    s* >= 2^-6 (the smallest normal E4M3), RNE with 3 mantissa bits gives |s - s*| <= 2^-4 s*,
//    and the amax saturation (s* a few fp32 ulps above 448, as g = fl(amax/2688) can round
//    down) stays inside that. Then S <= (17/16) A/6, so S/4 <= (17/16) A/24; and S >= (15/16)
//    A/6, so an element that saturates (|w| > 6S) overshoots by at most A/16 <= |w|/15.
//    Bound: max(|w|/4, (17/16) A/24).
// 3. Subnormal scales, s* < 2^-6: s has absolute error up to 2^-10 and may be 0 (then D = +-0
//    and the error is |w|). Here A < 6 * 2^-6 * g and S <= 2^-6 g, so every case above is
//    below 6 * 2^-6 * g = amax / 28672: relative precision is lost, absolute error is tiny.
// 4. fp32 roundings (s* = A / fl(6g), S, w / S, e2m1 * S): a few relative 2^-24 each, covered
//    by a factor (1 + 2^-20) on the bound plus 2^-22 (|w| + bound). The generator keeps
//    g >= 2^-117 so that every nonzero S >= 2^-9 g is a normal fp32 and these are relative.
// 5. The final RNE to the dtype: half an ulp, 2^-11 (fp16) or 2^-8 (bf16) relative, plus half
//    the smallest subnormal, 2^-25 (fp16) or 2^-134 (bf16), in absolute terms; no overflow:
//    the generator keeps |W| <= 2^14 for fp16, so |D| <= ~1.07 * 2^14 < 65504.

double error_bound(double w, double A, double g, Half kind) {
  const double a = std::fabs(w);
  const double normal_scale = std::ldexp(1.0, -6) * (1 + std::ldexp(1.0, -20));
  const double e2m1 = A / (6 * g) >= normal_scale ? std::max(a / 4, 17.0 / 16 * A / 24)
                                                  : 6 * std::ldexp(1.0, -6) * g;
  const double fp32 = e2m1 * (1 + std::ldexp(1.0, -20)) + std::ldexp(1.0, -22) * (a + e2m1);
  const bool fp16 = kind == Half::fp16;
  return fp32 + std::ldexp(1.0, fp16 ? -11 : -8) * (a + fp32) + std::ldexp(1.0, fp16 ? -25 : -134);
}

void check_error_bound(const Matrix& m, Half kind) {
  const QuantizedWeight q = quantize(m);
  RC_PRE(q.global_scale >= std::ldexp(1.0f, -117));  // see 4.; the generators never get below
  const std::vector<uint16_t> d = dequantize(q, kind);
  for (int64_t n = 0; n < m.N; ++n) {
    for (int64_t k = 0; k < m.K; ++k) {
      const double w = m.at(n, k), D = half_to_double(d[n * m.K + k], kind);
      const double bound = error_bound(w, block_amax(m, n, k), q.global_scale, kind);
      RC_ASSERT(std::fabs(D - w) <= bound);
    }
  }
}

RC_GTEST_PROP(QuantizeProperties, Fp16DequantWithinTheFormatErrorBound, ()) {
  // |W| in [2^-50, 2^14]: see 5. for the top; the bottom keeps g normal (see 4.).
  check_error_bound(draw_matrix(-30, 14, 8), Half::fp16);
}

RC_GTEST_PROP(QuantizeProperties, Bf16DequantWithinTheFormatErrorBound, ()) {
  // |W| in [2^-100, 2^100]: g >= 2^-100 / 2688 > 2^-112 stays normal, nothing overflows.
  check_error_bound(draw_matrix(-80, 100, 8), Half::bf16);
}

// The bound is not vacuous: the block amax itself is reproduced to within ~6% (step 2.'s scale
// rounding) whenever the scale is normal, and exactly when the scale is exact.
RC_GTEST_PROP(QuantizeProperties, BlockAmaxIsNearlyExact, ()) {
  const Matrix m = draw_matrix(-10, 10, 1000);
  const QuantizedWeight q = quantize(m);
  const std::vector<uint16_t> d = dequantize(q, Half::bf16);
  for (int64_t n = 0; n < m.N; ++n) {
    for (int64_t k = 0; k < m.K; ++k) {
      const double A = block_amax(m, n, k);
      if (A == 0 || std::fabs(m.at(n, k)) != A || A / (6 * q.global_scale) < std::ldexp(1.0, -6))
        continue;
      RC_ASSERT(std::fabs(half_to_double(d[n * m.K + k], Half::bf16) - m.at(n, k)) <=
                A * (1.0 / 16 + 1.0 / 128));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Scaling W by 2^p changes only weight_scale_2 (to g * 2^p): same codes, same block scales.
//
// Why it holds: every quantity is a quotient or product of two numbers that both scale by 2^p
// (W / S, block_amax / 6g) or carries the 2^p exactly (amax, g = amax/2688, S = s*g), and RNE
// of a normal float is scale invariant. Where it fails: (a) any W or W*2^p that is an fp32
// subnormal or overflows (the scaled matrix is not W*2^p exactly); (b) g or g*2^p subnormal
// (amax < ~2^-115: g = amax/2688 rounds on the fixed subnormal grid, not relative to its
// size; below ~2^-138.6 g is clamped to 2^-149); (c) a nonzero scale product S = s*g below
// 2^-126 (subnormal, same reason), i.e. g < 2^-117; (d) the all-zero matrix (g = 1 either
// way). So the generator keeps |W| in [2^-40, 2^20] and p in [-60, 60]: every scaled element
// lies in [2^-100, 2^80], amax >= 2^-100 gives g >= 2^-112, and nothing overflows.
RC_GTEST_PROP(QuantizeProperties, PowerOfTwoScalingChangesOnlyTheGlobalScale, ()) {
  const Matrix m = draw_matrix(-20, 20, 8);
  const int p = *rc::gen::inRange(-60, 61);
  Matrix scaled = m;
  for (float& w : scaled.W) w = std::ldexp(w, p);
  const QuantizedWeight q = quantize(m), qs = quantize(scaled);
  RC_ASSERT(qs.packed == q.packed);
  RC_ASSERT(qs.scales == q.scales);
  RC_ASSERT(qs.global_scale == (matrix_amax(m) == 0 ? 1.0f : std::ldexp(q.global_scale, p)));
}

// ---------------------------------------------------------------------------------------------
// Zeros: all-zero blocks (one in two here) and all-zero matrices give finite scales, zero
// output with the sign of W, and no NaN anywhere; nothing divides by zero.
RC_GTEST_PROP(QuantizeProperties, ZeroBlocksAndZeroMatricesGiveFiniteScalesAndZeros, ()) {
  Matrix m = draw_matrix(-20, 10, 2);
  if (*rc::gen::inRange(0, 4) == 0) {
    for (float& w : m.W) w = std::copysign(0.0f, w);  // an all-zero matrix, signs kept
  }
  const QuantizedWeight q = quantize(m);
  RC_ASSERT(std::isfinite(q.global_scale));
  RC_ASSERT(q.global_scale > 0.0f);
  if (matrix_amax(m) == 0) RC_ASSERT(q.global_scale == 1.0f);
  const int64_t blocks = scale_blocks_per_row(m.K, m.block_size);
  for (uint8_t s : q.scales) RC_ASSERT(std::isfinite(scale_product(s, q.global_scale)));
  for (Half kind : {Half::fp16, Half::bf16}) {
    const std::vector<uint16_t> d = dequantize(q, kind);
    for (int64_t n = 0; n < m.N; ++n) {
      for (int64_t k = 0; k < m.K; ++k) {
        const uint16_t bits = d[n * m.K + k];
        RC_ASSERT(!std::isnan(half_to_double(bits, kind)));
        if (block_amax(m, n, k) != 0) continue;
        RC_ASSERT(q.scales[n * blocks + k / m.block_size] == 0x00);
        RC_ASSERT(bits == (std::signbit(m.at(n, k)) ? 0x8000 : 0x0000));
      }
    }
  }
}

}  // namespace
}  // namespace nvfp4::ref
