#include "float16.h"

#include <array>
#include <cmath>
#include <limits>

#include "checks.h"
#include "minifloat.h"

namespace nvfp4::ref {

namespace {

struct HalfLayout {
  detail::MiniFormat format;
  uint16_t inf_bits;       // exponent field all ones, mantissa 0; also the exponent mask
  uint16_t canonical_nan;  // the NaN every conversion writes (DESIGN.md, "Special values")
  double max_finite;
};

// fp16: 1-5-10, max 65504. bf16: 1-8-7 (the top half of a float), max (2 - 2^-7) * 2^127.
// NaN: 0x7FFF in both, all mantissa bits set, sign clear: what the GPU's conversions, HMUL2,
// mma.sync and cuBLASLt write and what the CUDA headers' host conversions write (measured on
// the H200), so a NaN output is one bit pattern on every route and in the reference.
constexpr HalfLayout kFp16{detail::kFp16Format, 0x7C00, 0x7FFF, 65504.0};
constexpr HalfLayout kBf16{detail::kBf16Format, 0x7F80, 0x7FFF, 0x1.FEp127};

const HalfLayout& layout(const char* fn, Half kind) {
  detail::check_half(fn, kind);
  return kind == Half::fp16 ? kFp16 : kBf16;
}

uint16_t round_impl(const char* fn, double v, Half kind) {
  const HalfLayout& L = layout(fn, kind);
  if (std::isnan(v)) return L.canonical_nan;
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | L.inf_bits;
  const double r = detail::round_magnitude(a, L.format);
  // Rounding first, then comparing, gives IEEE overflow: only values that RNE would carry past
  // max_finite (i.e. >= max + half an ulp, ties going to the even "next binade") become inf.
  if (r > L.max_finite) return sign | L.inf_bits;
  return static_cast<uint16_t>(sign | detail::encode_magnitude(r, L.format));
}

}  // namespace

const char* half_name(Half kind) {
  detail::check_half("half_name", kind);
  return kind == Half::fp16 ? "fp16" : "bf16";
}

uint16_t round_to_half(double v, Half kind) { return round_impl("round_to_half", v, kind); }

uint16_t round_float_to_half(float v, Half kind) {
  return round_impl("round_float_to_half", static_cast<double>(v), kind);
}

namespace {

// The value of one encoding, from the format's fields (minifloat.h).
double decode_half(uint16_t bits, const HalfLayout& L) {
  const bool negative = (bits & 0x8000) != 0;
  const uint16_t magnitude = bits & 0x7FFF;
  double value = 0;
  if ((magnitude & L.inf_bits) == L.inf_bits) {
    if (magnitude != L.inf_bits) return std::numeric_limits<double>::quiet_NaN();
    value = std::numeric_limits<double>::infinity();
  } else {
    value = detail::decode_magnitude(magnitude, L.format);
  }
  return negative ? -value : value;
}

// Every one of a format's 2^16 encodings decoded once per process: a large
// case decodes millions of operand elements, and every one is one of 65536
// values.
using HalfTable = std::array<double, 65536>;
HalfTable decode_every_half(const HalfLayout& L) {
  HalfTable t{};
  for (uint32_t b = 0; b < t.size(); ++b) t[b] = decode_half(static_cast<uint16_t>(b), L);
  return t;
}
const HalfTable& half_table(Half kind) {
  static const HalfTable fp16 = decode_every_half(kFp16);
  static const HalfTable bf16 = decode_every_half(kBf16);
  return kind == Half::fp16 ? fp16 : bf16;
}

}  // namespace

double half_to_double(uint16_t bits, Half kind) {
  detail::check_half("half_to_double", kind);
  return half_table(kind)[bits];
}

std::vector<double> halves_to_doubles(const uint16_t* bits, int64_t count, Half kind) {
  detail::check_half("halves_to_doubles", kind);
  const HalfTable& table = half_table(kind);
  std::vector<double> out(static_cast<std::size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = table[bits[i]];
  return out;
}

}  // namespace nvfp4::ref
