#include "toolkit_crosscheck.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <type_traits>

#include "dequant.h"
#include "e2m1.h"
#include "e4m3.h"
#include "float16.h"

// NaN policy: fp16 and bf16 results are compared by bits, NaN included: both sides write 0x7FFF
// for every NaN (the toolkit's host conversions, like the GPU's, and the reference, DESIGN.md
// "Special values"), so a NaN with another pattern is a mismatch. Float results (E4M3 -> float)
// and E4M3 bytes match whenever both are NaN: an fp32 NaN's payload never reaches an output
// (every output is converted to 16 bits first), and E4M3 has two NaNs, 0x7F and 0xFF. A NaN on
// one side only is always a mismatch. Zeros are compared by bits, so -0.0 != +0.0.

namespace nvfp4::ref {

const char* const kCheckE2m1ToFp16 = "e2m1x2 byte -> fp16 vs __nv_cvt_fp4x2_to_halfraw2";
const char* const kCheckE2m1ToBf16 = "e2m1 nibble -> bf16 vs __nv_fp4_e2m1::operator __nv_bfloat16";
const char* const kCheckE2m1ToBf16ViaFloat =
    "e2m1x2 byte -> bf16 vs __nv_fp4x2_e2m1::operator float2 + __float2bfloat16_rn";
const char* const kCheckE4m3ToFp16 = "e4m3 -> fp16 vs __nv_cvt_fp8_to_halfraw";
const char* const kCheckE4m3ToFloat = "e4m3 -> float vs __nv_fp8_e4m3::operator float";
const char* const kCheckE4m3ToBf16 = "e4m3 -> bf16 vs __nv_fp8_e4m3::operator __nv_bfloat16";
const char* const kCheckFloatToE2m1 = "float -> e2m1 vs __nv_cvt_float_to_fp4(RN)";
const char* const kCheckFloatToE4m3 = "float -> e4m3 vs __nv_cvt_float_to_fp8(SATFINITE)";
const char* const kCheckFloatToFp16 = "float -> fp16 vs __float2half_rn";
const char* const kCheckFloatToBf16 = "float -> bf16 vs __float2bfloat16_rn";
const char* const kCheckDoubleToFp16 = "double -> fp16 vs __double2half";
const char* const kCheckDoubleToBf16 = "double -> bf16 vs __double2bfloat16";

namespace {

constexpr std::size_t kMaxListedMismatches = 8;

// Counts one check's comparisons and keeps the first few mismatches as text.
class Tally {
 public:
  explicit Tally(const char* name) { check_.name = name; }
  void record(bool match, const std::function<std::string()>& describe) {
    ++check_.compared;
    if (match) return;
    ++check_.mismatches;
    if (check_.first_mismatches.size() < kMaxListedMismatches)
      check_.first_mismatches.push_back(describe());
  }
  void skip(const char* reason) {
    ++check_.skipped;
    check_.skip_reason = reason;
  }
  PrimitiveCheck done() { return std::move(check_); }

 private:
  PrimitiveCheck check_;
};

// Bytes print as 0x7e, fp16/bf16 patterns as 0x7e00.
std::string hex(unsigned v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", digits, v);
  return buf;
}
std::string hex8(unsigned v) { return hex(v, 2); }
std::string hex16(unsigned v) { return hex(v, 4); }

std::string float_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a (%.9g)", v, v);
  return buf;
}

bool same_half(uint16_t a, uint16_t b, Half) { return a == b; }

bool is_e4m3_nan(uint8_t byte) { return (byte & 0x7F) == 0x7F; }

uint32_t float_bits(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_from_bits(uint32_t u) {
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

bool same_float(float a, float b) {
  return float_bits(a) == float_bits(b) || (std::isnan(a) && std::isnan(b));
}

uint16_t bits_of(__half h) { return static_cast<__half_raw>(h).x; }
uint16_t bits_of(__nv_bfloat16 b) { return static_cast<__nv_bfloat16_raw>(b).x; }

float toolkit_fp16_to_float(uint16_t bits) {
  __half_raw r;
  r.x = bits;
  return __half2float(__half(r));
}

float toolkit_bf16_to_float(uint16_t bits) {
  __nv_bfloat16_raw r;
  r.x = bits;
  return __bfloat162float(__nv_bfloat16(r));
}

// The reference decodes a packed byte through its own dequant path with a unit scale
// (E4M3 0x38 = 1.0, g = 1): [0] is element k = 0 (low nibble), [1] is k = 1 (high nibble).
std::vector<uint16_t> reference_decode_byte(uint8_t byte, Half kind) {
  const uint8_t unit_scale = 0x38;
  return dequantize(&byte, &unit_scale, 1.0f, 1, 2, 2, kind);
}

std::string nibble_text(int byte, int k, uint16_t want, uint16_t got) {
  return "byte " + hex8(byte) + (k == 0 ? " low" : " high") + " nibble: reference " + hex16(want) +
         ", toolkit " + hex16(got);
}

PrimitiveCheck check_e2m1_to_fp16() {
  Tally t(kCheckE2m1ToFp16);
  for (int byte = 0; byte < 256; ++byte) {
    const std::vector<uint16_t> want =
        reference_decode_byte(static_cast<uint8_t>(byte), Half::fp16);
    const __half2_raw pair =
        __nv_cvt_fp4x2_to_halfraw2(static_cast<__nv_fp4x2_storage_t>(byte), __NV_E2M1);
    const uint16_t got[2] = {pair.x, pair.y};  // .x is the low nibble
    for (int k = 0; k < 2; ++k) {
      t.record(same_half(want[k], got[k], Half::fp16),
               [&] { return nibble_text(byte, k, want[k], got[k]); });
    }
  }
  return t.done();
}

// cuda_fp4.h has no fp4 -> bf16 raw conversion function, so the bf16 side uses the class
// conversion operator __nv_fp4_e2m1 -> __nv_bfloat16 (which the header implements as
// __float2bfloat16_rz of the float value; every E2M1 value is exact in bf16, so rz = rn).
PrimitiveCheck check_e2m1_to_bf16() {
  Tally t(kCheckE2m1ToBf16);
  for (int byte = 0; byte < 256; ++byte) {
    const std::vector<uint16_t> want =
        reference_decode_byte(static_cast<uint8_t>(byte), Half::bf16);
    for (int k = 0; k < 2; ++k) {
      __nv_fp4_e2m1 v;
      v.__x = static_cast<__nv_fp4_storage_t>(k == 0 ? byte & 0xF : byte >> 4);
      const uint16_t got = bits_of(static_cast<__nv_bfloat16>(v));
      t.record(same_half(want[k], got, Half::bf16),
               [&] { return nibble_text(byte, k, want[k], got); });
    }
  }
  return t.done();
}

// The route a kernel would take for bf16: the packed pair to float2, then RN to bf16.
PrimitiveCheck check_e2m1_to_bf16_via_float() {
  Tally t(kCheckE2m1ToBf16ViaFloat);
  for (int byte = 0; byte < 256; ++byte) {
    const std::vector<uint16_t> want =
        reference_decode_byte(static_cast<uint8_t>(byte), Half::bf16);
    __nv_fp4x2_e2m1 pair;
    pair.__x = static_cast<__nv_fp4x2_storage_t>(byte);
    const float2 f = static_cast<float2>(pair);
    const uint16_t got[2] = {bits_of(__float2bfloat16_rn(f.x)), bits_of(__float2bfloat16_rn(f.y))};
    for (int k = 0; k < 2; ++k) {
      t.record(same_half(want[k], got[k], Half::bf16),
               [&] { return nibble_text(byte, k, want[k], got[k]); });
    }
  }
  return t.done();
}

__nv_fp8_e4m3 toolkit_e4m3(int byte) {
  __nv_fp8_e4m3 v;
  v.__x = static_cast<__nv_fp8_storage_t>(byte);
  return v;
}

std::string byte_text(int byte, uint16_t want, uint16_t got) {
  return "byte " + hex8(byte) + ": reference " + hex16(want) + ", toolkit " + hex16(got);
}

PrimitiveCheck check_e4m3_to_half(const char* name, Half kind) {
  Tally t(name);
  for (int byte = 0; byte < 256; ++byte) {
    const uint16_t want = round_float_to_half(e4m3_to_float(static_cast<uint8_t>(byte)), kind);
    const uint16_t got =
        kind == Half::fp16
            ? __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(byte), __NV_E4M3).x
            : bits_of(static_cast<__nv_bfloat16>(toolkit_e4m3(byte)));
    t.record(same_half(want, got, kind), [&] { return byte_text(byte, want, got); });
  }
  return t.done();
}

PrimitiveCheck check_e4m3_to_float() {
  Tally t(kCheckE4m3ToFloat);
  for (int byte = 0; byte < 256; ++byte) {
    const float want = e4m3_to_float(static_cast<uint8_t>(byte));
    const float got = static_cast<float>(toolkit_e4m3(byte));
    t.record(same_float(want, got), [&] {
      return "byte " + hex8(byte) + ": reference " + float_text(want) + ", toolkit " +
             float_text(got);
    });
  }
  return t.done();
}

// Adds v, its neighbours one float ulp away, and their negatives: ties and near-ties.
void add_with_neighbours(std::vector<float>& out, float v) {
  for (float x : {v, std::nextafter(v, 0.0f), std::nextafter(v, INFINITY)}) {
    out.push_back(x);
    out.push_back(-x);
  }
}

float toolkit_e2m1_to_float(int code) {
  __nv_fp4_e2m1 v;
  v.__x = static_cast<__nv_fp4_storage_t>(code);
  return static_cast<float>(v);
}

// Midpoints between consecutive positive values of a grid (decoded by the toolkit), and the
// point one half-step above the top value, where RNE would carry past the maximum.
void add_grid_midpoints(std::vector<float>& out, const std::vector<float>& grid) {
  for (std::size_t i = 0; i + 1 < grid.size(); ++i)
    add_with_neighbours(out, (grid[i] + grid[i + 1]) / 2);
  const float top = grid.back(), step = grid.back() - grid[grid.size() - 2];
  add_with_neighbours(out, top + step / 2);
}

// The encoder sweep: every fp16 and every bf16 bit pattern as a float (every binade a block
// scale or an element can reach, specials included), every 4093rd float bit pattern (the low
// mantissa bits fp16/bf16 never set), and every E2M1/E4M3 rounding midpoint and saturation
// threshold with its float neighbours.
std::vector<float> float_sweep() {
  std::vector<float> out;
  for (uint32_t b = 0; b < 65536; ++b) {
    out.push_back(toolkit_fp16_to_float(static_cast<uint16_t>(b)));
    out.push_back(toolkit_bf16_to_float(static_cast<uint16_t>(b)));
  }
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4093)
    out.push_back(float_from_bits(static_cast<uint32_t>(u)));
  std::vector<float> e2m1_grid, e4m3_grid;
  for (int code = 0; code <= 7; ++code) e2m1_grid.push_back(toolkit_e2m1_to_float(code));
  for (int byte = 0; byte <= 0x7E; ++byte)
    e4m3_grid.push_back(static_cast<float>(toolkit_e4m3(byte)));
  add_grid_midpoints(out, e2m1_grid);
  add_grid_midpoints(out, e4m3_grid);
  return out;
}

// The fp16/bf16 rounding sweep from double: every midpoint between consecutive finite values
// (and the overflow threshold max + half an ulp) with its double neighbours, both signs, plus
// the float sweep. Doubles reach the ties exactly, which floats cannot for every binade.
std::vector<double> double_sweep(Half kind, const std::vector<float>& floats) {
  std::vector<double> out(floats.begin(), floats.end());
  const uint16_t max_finite = kind == Half::fp16 ? 0x7BFF : 0x7F7F;
  auto value = [&](uint32_t b) {
    return static_cast<double>(kind == Half::fp16
                                   ? toolkit_fp16_to_float(static_cast<uint16_t>(b))
                                   : toolkit_bf16_to_float(static_cast<uint16_t>(b)));
  };
  for (uint32_t b = 0; b <= max_finite; ++b) {
    const double lo = value(b);
    const double mid = b < max_finite ? (lo + value(b + 1)) / 2 : lo + (lo - value(b - 1)) / 2;
    for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, INFINITY)}) {
      out.push_back(x);
      out.push_back(-x);
    }
  }
  return out;
}

PrimitiveCheck check_float_to_e2m1(const std::vector<float>& sweep) {
  Tally t(kCheckFloatToE2m1);
  for (float f : sweep) {
    if (std::isnan(f)) {
      // E2M1 has no NaN: the reference rejects it (std::invalid_argument), the toolkit returns
      // +6 (0x7). Neither is a rounding; there is nothing to compare.
      t.skip("NaN inputs: the reference throws, the toolkit returns 0x7 (+6)");
      continue;
    }
    const uint8_t want = float_to_e2m1(f);
    const uint8_t got = __nv_cvt_float_to_fp4(f, __NV_E2M1, cudaRoundNearest);
    t.record(want == got, [&] {
      return float_text(f) + ": reference " + hex8(want) + ", toolkit " + hex8(got);
    });
  }
  return t.done();
}

PrimitiveCheck check_float_to_e4m3(const std::vector<float>& sweep) {
  Tally t(kCheckFloatToE4m3);
  for (float f : sweep) {
    const uint8_t want = float_to_e4m3(f);
    const uint8_t got = __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3);
    t.record(want == got || (is_e4m3_nan(want) && is_e4m3_nan(got)), [&] {
      return float_text(f) + ": reference " + hex8(want) + ", toolkit " + hex8(got);
    });
  }
  return t.done();
}

template <typename Value, typename Toolkit>
PrimitiveCheck check_round_to_half(const char* name, Half kind, const std::vector<Value>& sweep,
                                   Toolkit toolkit) {
  Tally t(name);
  for (Value v : sweep) {
    uint16_t want = 0;
    if constexpr (std::is_same_v<Value, float>) {
      want = round_float_to_half(v, kind);
    } else {
      want = round_to_half(v, kind);
    }
    const uint16_t got = bits_of(toolkit(v));
    t.record(same_half(want, got, kind), [&] {
      return float_text(static_cast<double>(v)) + ": reference " + hex16(want) + ", toolkit " +
             hex16(got);
    });
  }
  return t.done();
}

}  // namespace

int64_t PrimitiveReport::total_mismatches() const {
  int64_t total = 0;
  for (const PrimitiveCheck& c : checks) total += c.mismatches;
  return total;
}

const PrimitiveCheck* PrimitiveReport::find(const std::string& name) const {
  for (const PrimitiveCheck& c : checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string PrimitiveReport::to_text() const {
  std::string text;
  for (const PrimitiveCheck& c : checks) {
    text += (c.mismatches == 0 ? "OK   " : "FAIL ") + c.name + ": " + std::to_string(c.compared) +
            " compared, " + std::to_string(c.mismatches) + " mismatches";
    if (c.skipped > 0)
      text += ", " + std::to_string(c.skipped) + " skipped (" + c.skip_reason + ")";
    text += "\n";
    for (const std::string& m : c.first_mismatches) text += "       " + m + "\n";
  }
  return text;
}

PrimitiveReport check_primitives() {
  const std::vector<float> floats = float_sweep();
  PrimitiveReport r;
  r.checks.push_back(check_e2m1_to_fp16());
  r.checks.push_back(check_e2m1_to_bf16());
  r.checks.push_back(check_e2m1_to_bf16_via_float());
  r.checks.push_back(check_e4m3_to_half(kCheckE4m3ToFp16, Half::fp16));
  r.checks.push_back(check_e4m3_to_float());
  r.checks.push_back(check_e4m3_to_half(kCheckE4m3ToBf16, Half::bf16));
  r.checks.push_back(check_float_to_e2m1(floats));
  r.checks.push_back(check_float_to_e4m3(floats));
  r.checks.push_back(check_round_to_half(kCheckFloatToFp16, Half::fp16, floats,
                                         [](float f) { return __float2half_rn(f); }));
  r.checks.push_back(check_round_to_half(kCheckFloatToBf16, Half::bf16, floats,
                                         [](float f) { return __float2bfloat16_rn(f); }));
  r.checks.push_back(check_round_to_half(kCheckDoubleToFp16, Half::fp16,
                                         double_sweep(Half::fp16, floats),
                                         [](double d) { return __double2half(d); }));
  r.checks.push_back(check_round_to_half(kCheckDoubleToBf16, Half::bf16,
                                         double_sweep(Half::bf16, floats),
                                         [](double d) { return __double2bfloat16(d); }));
  return r;
}

}  // namespace nvfp4::ref
