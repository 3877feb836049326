// reference/nvfp4_matmul/quantize.h -- NVFP4 weight quantization from a float matrix (amax-based
// scales).
//
// The convention, all arithmetic in fp32 (each operation rounded to fp32, RNE):
//   weight_scale_2 g = amax / (6 * 448)                 amax = max |W| over the whole matrix
//   block scale    s = e4m3(block_amax / (6 * g))       one E4M3 byte per block_size elements of a
//   row code           c = e2m1(W / (float(s) * g))         float(s) * g is dequant.h's
//   scale_product
// so the matrix amax maps to 6 * 448, the top of E2M1 x E4M3, and each block's amax to about 6.
//
// Zeros never divide by zero:
//   * amax == 0 (all-zero matrix): g = 1.
//   * amax > 0 but amax / 2688 underflows fp32 to 0 (all |W| < ~2^-138.6): g = 2^-149, the
//     smallest positive float, so 6 * g > 0. Such a matrix keeps only coarse precision.
//   * a block whose scale product float(s) * g is 0 (an all-zero block, or a block far below
//     the matrix amax whose scale rounds to E4M3 zero): its codes are signed zeros (0x0 or 0x8
//     by the sign of W), the value RNE gives for anything divided by a vanishing scale.
#pragma once

#include <cstdint>
#include <vector>

namespace nvfp4::ref {

struct QuantizedWeight {
  int64_t N = 0, K = 0, block_size = 0;
  std::vector<uint8_t> packed;  // [N, ceil(K/2)] packed E2M1 (packing.h)
  std::vector<uint8_t> scales;  // [N, ceil(K/block_size)] E4M3 bytes
  float global_scale = 0.f;     // weight_scale_2
};

// ceil(K / block_size); K >= 0, block_size > 0.
int64_t scale_blocks_per_row(int64_t K, int64_t block_size);

// W: [N, K] row-major, every element finite. block_size > 0 (need not divide K: the last block
// of a row is short).
QuantizedWeight quantize_nvfp4(const float* W, int64_t N, int64_t K, int64_t block_size);

// The steps of quantize_nvfp4, public so that other tests can build cases by hand.
// amax: finite, >= 0. Returns g (see the conventions above).
float global_scale_for_amax(float amax);
// block_amax: finite, >= 0; global_scale: finite, > 0. Returns the E4M3 byte.
uint8_t block_scale_for_amax(float block_amax, float global_scale);
// w: finite; scale_product: finite, >= 0 (dequant.h). Returns the E2M1 code.
uint8_t encode_element(float w, float scale_product);

}  // namespace nvfp4::ref
