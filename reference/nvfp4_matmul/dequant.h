// reference/nvfp4_matmul/dequant.h -- CPU dequantization: the bit-exact contract every route must
// meet.
//
//   W[n,k] = round_to_dtype(e2m1(code) * (float(e4m3(scale)) * g))
//
// The scale product float(e4m3(scale)) * g is formed FIRST and rounded to fp32; it is then
// multiplied by the E2M1 value in fp32 (rounded to fp32), and that float is rounded once, RNE,
// to fp16/bf16. Multiplying in another order, (e2m1 * e4m3) * g, can differ by one fp32 ulp,
// so the order is part of the contract.
#pragma once

#include <cstdint>
#include <vector>

#include "float16.h"
#include "quantize.h"

namespace nvfp4::ref {

// float(e4m3(scale_byte)) * global_scale, rounded to fp32. A NaN scale byte gives NaN.
float scale_product(uint8_t scale_byte, float global_scale);

// round_to_dtype(e2m1(code) * scale_product), the product rounded to fp32 first.
uint16_t dequantize_element(uint8_t code, float scale_product, Half kind);

// packed: [N, ceil(K/2)]; scales: [N, ceil(K/block_size)]. Returns [N, K] bit patterns of kind.
// Any global_scale is accepted and carried through faithfully (a NaN gives NaN outputs, as the
// operator would): only shapes and pointers are argument errors here.
std::vector<uint16_t> dequantize(const uint8_t* packed, const uint8_t* scales, float global_scale,
                                 int64_t N, int64_t K, int64_t block_size, Half kind);
std::vector<uint16_t> dequantize(const QuantizedWeight& q, Half kind);

}  // namespace nvfp4::ref
