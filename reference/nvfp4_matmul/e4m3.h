// reference/nvfp4_matmul/e4m3.h -- FP8 E4M3, the "fn" variant used for NVFP4 block scales: 1 sign,
// 4 exponent bits with bias 7, 3 mantissa bits, subnormals, no inf; only 0x7F and 0xFF are
// NaN, so the largest finite value is 1.75 * 2^8 = 448 (0x7E).
#pragma once

#include <cstdint>

namespace nvfp4::ref {

// Exact; 0x7F / 0xFF -> quiet NaN, 0x80 -> -0.0.
float e4m3_to_float(uint8_t byte);

// RNE, subnormals included; |v| > 448 (inf included) saturates to +-448 (0x7E / 0xFE), as
// the toolkit's __NV_SATFINITE does; NaN -> 0x7F; the sign of zero is kept (-0.0 -> 0x80).
uint8_t float_to_e4m3(float v);

}  // namespace nvfp4::ref
