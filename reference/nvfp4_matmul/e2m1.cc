#include "e2m1.h"

#include <cmath>

#include "checks.h"
#include "minifloat.h"

namespace nvfp4::ref {

namespace {
constexpr uint8_t kSignBit = 0x8;
constexpr uint8_t kMaxCode = 0x7;  // 6.0
constexpr double kMax = 6.0;
}  // namespace

float e2m1_to_float(uint8_t code) {
  detail::check_code("e2m1_to_float", "code", code);
  const auto magnitude =
      static_cast<float>(detail::decode_magnitude(code & 0x7u, detail::kE2M1Format));
  return (code & kSignBit) ? -magnitude : magnitude;
}

uint8_t float_to_e2m1(float v) {
  if (std::isnan(v)) detail::fail("float_to_e2m1", "v", "nan", "must not be NaN (E2M1 has no NaN)");
  const uint8_t sign = std::signbit(v) ? kSignBit : 0;
  const double a = std::fabs(static_cast<double>(v));
  // Saturate before rounding: the grid has no value above 6 to round to.
  if (a > kMax) return sign | kMaxCode;
  const double r = detail::round_magnitude(a, detail::kE2M1Format);
  return static_cast<uint8_t>(sign | detail::encode_magnitude(r, detail::kE2M1Format));
}

}  // namespace nvfp4::ref
