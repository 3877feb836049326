#include "e4m3.h"

#include <cmath>
#include <limits>

#include "minifloat.h"

namespace nvfp4::ref {

namespace {
constexpr uint8_t kSignBit = 0x80;
constexpr uint8_t kNaN = 0x7F;
constexpr uint8_t kMaxByte = 0x7E;  // 448
constexpr double kMax = 448.0;
}  // namespace

float e4m3_to_float(uint8_t byte) {
  if ((byte & 0x7F) == kNaN) return std::numeric_limits<float>::quiet_NaN();
  const auto magnitude =
      static_cast<float>(detail::decode_magnitude(byte & 0x7Fu, detail::kE4M3Format));
  return (byte & kSignBit) ? -magnitude : magnitude;
}

uint8_t float_to_e4m3(float v) {
  if (std::isnan(v)) return kNaN;
  const uint8_t sign = std::signbit(v) ? kSignBit : 0;
  const double a = std::fabs(static_cast<double>(v));
  // Saturate before rounding: RNE above 464 would reach 480, whose encoding is the NaN 0x7F.
  if (a > kMax) return sign | kMaxByte;
  const double r = detail::round_magnitude(a, detail::kE4M3Format);
  return static_cast<uint8_t>(sign | detail::encode_magnitude(r, detail::kE4M3Format));
}

}  // namespace nvfp4::ref
