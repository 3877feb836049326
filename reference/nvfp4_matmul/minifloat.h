// reference/nvfp4_matmul/minifloat.h -- internal: rounding and bit layout of a small binary float
// format.
//
// E2M1, E4M3, fp16 and bf16 share one layout: [sign][exponent field][mantissa field], bias B,
// field 0 = subnormals (no implicit 1), a smallest normal exponent of 1 - B. Writing the RNE
// rounding once, from that definition alone, keeps the four codecs from drifting apart. The
// special encodings (inf, NaN, saturation) differ per format and stay in each codec.
#pragma once

#include <cstdint>

namespace nvfp4::ref::detail {

struct MiniFormat {
  int mantissa_bits;  // stored fraction bits
  int exponent_bias;  // B; the smallest normal is 2^(1-B)
};

inline constexpr MiniFormat kE2M1Format{1, 1};
inline constexpr MiniFormat kE4M3Format{3, 7};
inline constexpr MiniFormat kFp16Format{10, 15};
inline constexpr MiniFormat kBf16Format{7, 127};

// Round a finite a >= 0 to the nearest value of the format's grid, ties to an even mantissa.
// The exponent range is unbounded above: the caller decides what overflow means (inf, saturate).
double round_magnitude(double a, const MiniFormat& f);

// Exponent and mantissa fields (no sign) of a finite value >= 0 that lies on the grid.
uint32_t encode_magnitude(double value, const MiniFormat& f);

// The value of the exponent and mantissa fields `bits`; exact. Callers strip the sign and
// handle the format's special encodings first.
double decode_magnitude(uint32_t bits, const MiniFormat& f);

}  // namespace nvfp4::ref::detail
