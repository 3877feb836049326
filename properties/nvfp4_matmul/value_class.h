// Value classes: one special class of one input per case (NaN, infinities,
// -0.0, subnormals, extreme or odd weight_scale_2, ...), injected into a
// case's otherwise ordinary inputs, so the value_class family can take every
// class through every route (DESIGN.md, "Special values"). A class keeps an
// exact-mode case exact: its finite terms stay on a grid every route sums
// without rounding, so the cross-route check can demand the same bits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nvfp4 {

struct CaseSpec;
struct CaseInputs;

enum class ValueClass {
  none,
  // A (fp16/bf16 activations)
  a_nan,        // NaNs of several patterns (quiet, signalling, negative) in two rows
  a_inf,        // +inf in two rows (once, and twice in a row)
  a_neg_inf,    // -inf likewise
  a_neg_zero,   // every zero of A is -0; (M > 1) one whole row is -0 and meets one non-negative
                // row of W with a -0 bias: every product -0, the output +0
  a_subnormal,  // one row (every row when M == 1) of the smallest subnormals, +-1..7 ulps
  // weight_scale (E4M3 bytes)
  scale_nan_7f,         // 0x7F in an even and an odd scale block (both halves of a GEMV scale pair)
  scale_nan_ff,         // 0xFF likewise
  scale_subnormal,      // whole rows of subnormal scales 0x01..0x07
  scale_neg_subnormal,  // whole rows of 0x81..0x87
  scale_zero,           // scattered 0x00 scales
  scale_neg_zero,       // scattered 0x80 scales
  scale_negative,       // scattered negative scales (sign bit set on an ordinary scale)
  // weight_scale_2 (g, fp32)
  g_zero,
  g_neg_zero,
  g_subnormal,  // 0x1.8p-140
  g_pow2_edge,  // a power of two at, or one step past, an end of a GEMV fast window (which: the
                // seed)
  g_huge,       // 0x1.8p100: fp16 weights overflow to inf, bf16 ones are huge but finite
  g_inf,
  g_neg_inf,
  g_nan,       // quiet or negative NaN (which: the seed)
  g_negative,  // -0.25
  g_not_pow2,  // 0.3 with every scale byte 1.0: each weight rounds (fp32, then the dtype)
  // (every g class scales the bias, if any, by |g| where that is exact, to keep it on the weights'
  // grid) bias
  bias_zero,      // scattered +0
  bias_neg_zero,  // scattered -0, every column when K == 0
  bias_inf,
  bias_neg_inf,
  bias_nan,  // NaNs of several patterns
};

// Every class but none, in declaration order.
const std::vector<ValueClass>& all_value_classes();
const char* value_class_name(ValueClass c);  // "g_inf"; "none"
std::optional<ValueClass> parse_value_class(const std::string& name);

// Which input a class changes.
enum class ValueInput { none, a, scale, g, bias };
ValueInput value_class_input(ValueClass c);

// The powers of two g_pow2_edge draws from for a dtype (fp16 or bf16), in
// order: the ends of gemv_scalar's and gemv_mma's fast windows and one step
// past each.
std::vector<float> pow2_edges(bool fp16);

// Rewrites `in` (built for `spec` without the class) so it holds spec.value_class.
// Deterministic in the spec. Throws std::invalid_argument when the class has
// nothing to change: an A or scale class with M, N or K zero, a bias class
// without a bias.
void inject_value_class(const CaseSpec& spec, CaseInputs& in);

}  // namespace nvfp4
