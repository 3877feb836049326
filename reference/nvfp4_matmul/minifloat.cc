#include "minifloat.h"

#include <algorithm>
#include <cmath>

namespace nvfp4::ref::detail {

namespace {

// Exponent of the grid spacing (ulp) for values of magnitude a: subnormals share the
// smallest normal binade's spacing.
int ulp_exponent(double a, const MiniFormat& f) {
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): the leading bit has exponent e - 1
  const int leading = std::max(e - 1, 1 - f.exponent_bias);
  return leading - f.mantissa_bits;
}

}  // namespace

double round_magnitude(double a, const MiniFormat& f) {
  if (a == 0) return 0;
  const int ulp = ulp_exponent(a, f);
  // q = a / 2^ulp is exact (a power-of-two scale that does not underflow), and below
  // 2^(mantissa_bits + 1), so floor() and the fraction are exact too.
  const double q = std::ldexp(a, -ulp);
  double n = std::floor(q);
  const double frac = q - n;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(n, 2.0) != 0)) n += 1;
  return std::ldexp(n, ulp);
}

uint32_t encode_magnitude(double value, const MiniFormat& f) {
  const int min_normal_exp = 1 - f.exponent_bias;
  if (value < std::ldexp(1.0, min_normal_exp)) {
    // Subnormal: the mantissa field counts ulps of the smallest binade.
    return static_cast<uint32_t>(std::ldexp(value, f.mantissa_bits - min_normal_exp));
  }
  int e = 0;
  const double m = std::frexp(value, &e);  // value = (2m) * 2^(e-1), 2m in [1, 2)
  const auto field = static_cast<uint32_t>(e - 1 + f.exponent_bias);
  const auto mantissa =
      static_cast<uint32_t>(std::ldexp(m, f.mantissa_bits + 1)) - (1u << f.mantissa_bits);
  return (field << f.mantissa_bits) | mantissa;
}

double decode_magnitude(uint32_t bits, const MiniFormat& f) {
  const uint32_t field = bits >> f.mantissa_bits;
  const uint32_t mantissa = bits & ((1u << f.mantissa_bits) - 1u);
  if (field == 0) return std::ldexp(mantissa, 1 - f.exponent_bias - f.mantissa_bits);
  const uint32_t significand = (1u << f.mantissa_bits) | mantissa;
  return std::ldexp(significand, static_cast<int>(field) - f.exponent_bias - f.mantissa_bits);
}

}  // namespace nvfp4::ref::detail
