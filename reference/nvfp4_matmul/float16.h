// reference/nvfp4_matmul/float16.h -- fp16 and bf16 as bit patterns, with the reference's own
// round-to-nearest-even (deliberately not cuda_fp16.h: the oracle must not share code with
// what it checks; toolkit_crosscheck.h compares the two).
#pragma once

#include <cstdint>
#include <vector>

namespace nvfp4::ref {

enum class Half { fp16, bf16 };

// "fp16" / "bf16".
const char* half_name(Half kind);

// RNE, subnormals included; overflow -> +-inf; any NaN -> 0x7FFF (fp16 and bf16, sign dropped:
// the NaN the GPU and the CUDA headers write, DESIGN.md "Special values"); the sign of zero is
// kept.
uint16_t round_to_half(double v, Half kind);

// The same from a float. float -> double is exact, so this is still one rounding.
uint16_t round_float_to_half(float v, Half kind);

// The exact value of a bit pattern (inf -> +-inf, NaN -> quiet NaN): a
// lookup in a table of every pattern, decoded from the format's fields once
// per process.
double half_to_double(uint16_t bits, Half kind);

// half_to_double of each of `count` bit patterns: operands converted once,
// so the oracle's loops over M, N and K decode no bits.
std::vector<double> halves_to_doubles(const uint16_t* bits, int64_t count, Half kind);

}  // namespace nvfp4::ref
