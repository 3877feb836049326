// reference/nvfp4_matmul/e2m1.h -- the NVFP4 element format E2M1 (1 sign, 2 exponent bits with bias
// 1, 1 mantissa bit; no inf, no NaN).
#pragma once

#include <cstdint>

namespace nvfp4::ref {

// code 0..15: codes 0..7 = {0, 0.5, 1, 1.5, 2, 3, 4, 6}, bit 3 = sign, 0x8 = -0.0.
// code > 15 -> std::invalid_argument naming the value.
float e2m1_to_float(uint8_t code);

// Round to nearest on the E2M1 grid, ties to the even code (0.25 -> 0, 0.75 -> 1, 2.5 -> 2,
// 5 -> 4); |v| > 6 (inf included) saturates to +-6, as the toolkit's satfinite conversion does.
// The sign is kept when the result is zero (-0.0 and tiny negatives -> 0x8).
// NaN -> std::invalid_argument: E2M1 has no NaN, and a silent choice would hide a bug.
uint8_t float_to_e2m1(float v);

}  // namespace nvfp4::ref
