#include "quantize.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "checks.h"
#include "dequant.h"
#include "e2m1.h"
#include "e4m3.h"
#include "packing.h"

static_assert(FLT_EVAL_METHOD == 0, "fp32 arithmetic must be evaluated in fp32");

namespace nvfp4::ref {

namespace {

// 6 = the largest E2M1 value, 448 = the largest E4M3 value; 2688 is exact in fp32.
constexpr float kE2M1Max = 6.0f;
constexpr float kE2M1TimesE4M3Max = 6.0f * 448.0f;

void check_all_finite(const char* fn, const float* W, int64_t N, int64_t K) {
  for (int64_t n = 0; n < N; ++n) {
    // The element's name is built only for the message: per weight it cost more than the
    // quantizing.
    for (int64_t k = 0; k < K; ++k) {
      if (!std::isfinite(W[n * K + k]))
        detail::check_finite(fn, detail::element_name("W", n, k), W[n * K + k]);
    }
  }
}

float max_abs(const float* begin, const float* end) {
  float m = 0.0f;
  for (const float* p = begin; p != end; ++p) m = std::max(m, std::fabs(*p));
  return m;
}

// Quantizes one row: its `blocks` scale bytes into scales[], its K codes into codes[].
// (b * block_size < K for every block b, so the index arithmetic cannot overflow.)
void quantize_row(const float* row, int64_t K, int64_t block_size, int64_t blocks, float g,
                  uint8_t* scales, uint8_t* codes) {
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t start = b * block_size;
    const int64_t end = (K - start > block_size) ? start + block_size : K;
    scales[b] = block_scale_for_amax(max_abs(row + start, row + end), g);
    const float sp = scale_product(scales[b], g);
    for (int64_t k = start; k < end; ++k) codes[k] = encode_element(row[k], sp);
  }
}

}  // namespace

int64_t scale_blocks_per_row(int64_t K, int64_t block_size) {
  detail::check_nonnegative("scale_blocks_per_row", "K", K);
  detail::check_positive("scale_blocks_per_row", "block_size", block_size);
  return detail::ceil_div(K, block_size);
}

float global_scale_for_amax(float amax) {
  constexpr const char* fn = "global_scale_for_amax";
  if (!std::isfinite(amax) || amax < 0)
    detail::fail(fn, "amax", detail::float_text(amax), "must be finite and >= 0");
  if (amax == 0) return 1.0f;
  const float g = amax / kE2M1TimesE4M3Max;
  return g > 0 ? g : std::numeric_limits<float>::denorm_min();
}

uint8_t block_scale_for_amax(float block_amax, float global_scale) {
  constexpr const char* fn = "block_scale_for_amax";
  if (!std::isfinite(block_amax) || block_amax < 0) {
    detail::fail(fn, "block_amax", detail::float_text(block_amax), "must be finite and >= 0");
  }
  if (!std::isfinite(global_scale) || global_scale <= 0) {
    detail::fail(fn, "global_scale", detail::float_text(global_scale), "must be finite and > 0");
  }
  const float denominator = kE2M1Max * global_scale;  // > 0: global_scale >= 2^-149
  return float_to_e4m3(block_amax / denominator);
}

uint8_t encode_element(float w, float scale_product) {
  constexpr const char* fn = "encode_element";
  detail::check_finite(fn, "w", w);
  if (!std::isfinite(scale_product) || scale_product < 0) {
    detail::fail(fn, "scale_product", detail::float_text(scale_product), "must be finite and >= 0");
  }
  if (scale_product == 0) return std::signbit(w) ? 0x8 : 0x0;  // see quantize.h: signed zero
  return float_to_e2m1(w / scale_product);  // w / tiny may be inf: E2M1 saturates it to +-6
}

QuantizedWeight quantize_nvfp4(const float* W, int64_t N, int64_t K, int64_t block_size) {
  constexpr const char* fn = "quantize_nvfp4";
  detail::check_nonnegative(fn, "N", N);
  detail::check_nonnegative(fn, "K", K);
  detail::check_positive(fn, "block_size", block_size);
  const int64_t count = detail::checked_product(fn, "N", N, "K", K);
  const int64_t blocks = scale_blocks_per_row(K, block_size);
  const int64_t scale_count = detail::checked_product(fn, "N", N, "ceil(K/block_size)", blocks);
  detail::check_pointer(fn, "W", W, count);
  check_all_finite(fn, W, N, K);

  QuantizedWeight q;
  q.N = N;
  q.K = K;
  q.block_size = block_size;
  q.global_scale = global_scale_for_amax(max_abs(W, W + count));
  q.scales.assign(static_cast<std::size_t>(scale_count), 0);
  std::vector<uint8_t> codes(static_cast<std::size_t>(count), 0);
  for (int64_t n = 0; n < N; ++n) {
    quantize_row(W + n * K, K, block_size, blocks, q.global_scale, q.scales.data() + n * blocks,
                 codes.data() + n * K);
  }
  q.packed = pack_e2m1_rows(codes, N, K);
  return q;
}

}  // namespace nvfp4::ref
