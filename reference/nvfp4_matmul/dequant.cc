#include "dequant.h"

#include <cfloat>

#include "checks.h"
#include "e2m1.h"
#include "e4m3.h"
#include "packing.h"

// The contract rounds every fp32 product to fp32; x87-style excess precision would break it.
static_assert(FLT_EVAL_METHOD == 0, "fp32 arithmetic must be evaluated in fp32");

namespace nvfp4::ref {

float scale_product(uint8_t scale_byte, float global_scale) {
  return e4m3_to_float(scale_byte) * global_scale;
}

uint16_t dequantize_element(uint8_t code, float scale_product, Half kind) {
  const float value = e2m1_to_float(code) * scale_product;  // rounded to fp32 here
  return round_float_to_half(value, kind);                  // and once more, to the dtype
}

std::vector<uint16_t> dequantize(const uint8_t* packed, const uint8_t* scales, float global_scale,
                                 int64_t N, int64_t K, int64_t block_size, Half kind) {
  constexpr const char* fn = "dequantize";
  detail::check_nonnegative(fn, "N", N);
  detail::check_nonnegative(fn, "K", K);
  detail::check_positive(fn, "block_size", block_size);
  detail::check_half(fn, kind);
  const int64_t count = detail::checked_product(fn, "N", N, "K", K);
  const int64_t blocks = scale_blocks_per_row(K, block_size);
  const int64_t scale_count = detail::checked_product(fn, "N", N, "ceil(K/block_size)", blocks);
  detail::check_pointer(fn, "packed", packed, N * packed_row_bytes(K));
  detail::check_pointer(fn, "scales", scales, scale_count);

  std::vector<uint16_t> out(static_cast<std::size_t>(count));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < K; ++k) {
      const float sp = scale_product(scales[n * blocks + k / block_size], global_scale);
      out[static_cast<std::size_t>(n * K + k)] =
          dequantize_element(packed_code_at(packed, K, n, k), sp, kind);
    }
  }
  return out;
}

std::vector<uint16_t> dequantize(const QuantizedWeight& q, Half kind) {
  constexpr const char* fn = "dequantize";
  detail::check_nonnegative(fn, "q.N", q.N);
  detail::check_nonnegative(fn, "q.K", q.K);
  detail::check_positive(fn, "q.block_size", q.block_size);
  const int64_t blocks = scale_blocks_per_row(q.K, q.block_size);
  detail::check_size(fn, "q.packed", q.packed.size(),
                     detail::checked_product(fn, "q.N", q.N, "ceil(q.K/2)", packed_row_bytes(q.K)),
                     "q.N*ceil(q.K/2)");
  detail::check_size(fn, "q.scales", q.scales.size(),
                     detail::checked_product(fn, "q.N", q.N, "ceil(q.K/q.block_size)", blocks),
                     "q.N*ceil(q.K/q.block_size)");
  return dequantize(q.packed.data(), q.scales.data(), q.global_scale, q.N, q.K, q.block_size, kind);
}

}  // namespace nvfp4::ref
