#include "properties/nvfp4_matmul/value_class.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>

#include "properties/nvfp4_matmul/matmul_case.h"
#include "reference/nvfp4_matmul/float16.h"
#include "reference/nvfp4_matmul/quantize.h"

namespace nvfp4 {
namespace {

struct ClassName {
  ValueClass c;
  const char* name;
  ValueInput input;
};

constexpr ClassName kClasses[] = {
    {ValueClass::none, "none", ValueInput::none},
    {ValueClass::a_nan, "a_nan", ValueInput::a},
    {ValueClass::a_inf, "a_inf", ValueInput::a},
    {ValueClass::a_neg_inf, "a_neg_inf", ValueInput::a},
    {ValueClass::a_neg_zero, "a_neg_zero", ValueInput::a},
    {ValueClass::a_subnormal, "a_subnormal", ValueInput::a},
    {ValueClass::scale_nan_7f, "scale_nan_7f", ValueInput::scale},
    {ValueClass::scale_nan_ff, "scale_nan_ff", ValueInput::scale},
    {ValueClass::scale_subnormal, "scale_subnormal", ValueInput::scale},
    {ValueClass::scale_neg_subnormal, "scale_neg_subnormal", ValueInput::scale},
    {ValueClass::scale_zero, "scale_zero", ValueInput::scale},
    {ValueClass::scale_neg_zero, "scale_neg_zero", ValueInput::scale},
    {ValueClass::scale_negative, "scale_negative", ValueInput::scale},
    {ValueClass::g_zero, "g_zero", ValueInput::g},
    {ValueClass::g_neg_zero, "g_neg_zero", ValueInput::g},
    {ValueClass::g_subnormal, "g_subnormal", ValueInput::g},
    {ValueClass::g_pow2_edge, "g_pow2_edge", ValueInput::g},
    {ValueClass::g_huge, "g_huge", ValueInput::g},
    {ValueClass::g_inf, "g_inf", ValueInput::g},
    {ValueClass::g_neg_inf, "g_neg_inf", ValueInput::g},
    {ValueClass::g_nan, "g_nan", ValueInput::g},
    {ValueClass::g_negative, "g_negative", ValueInput::g},
    {ValueClass::g_not_pow2, "g_not_pow2", ValueInput::g},
    {ValueClass::bias_zero, "bias_zero", ValueInput::bias},
    {ValueClass::bias_neg_zero, "bias_neg_zero", ValueInput::bias},
    {ValueClass::bias_inf, "bias_inf", ValueInput::bias},
    {ValueClass::bias_neg_inf, "bias_neg_inf", ValueInput::bias},
    {ValueClass::bias_nan, "bias_nan", ValueInput::bias},
};

const ClassName& entry(ValueClass c) {
  for (const ClassName& e : kClasses) {
    if (e.c == c) return e;
  }
  throw std::invalid_argument("value_class_name: value_class = " +
                              std::to_string(static_cast<int>(c)) + ": not a ValueClass");
}

// fp16 / bf16 bit patterns the classes write.
struct Patterns {
  uint16_t inf;
  uint16_t
      nans[4];  // the canonical quiet NaN, 0x7FFF, a negative NaN with payload, a signalling NaN
};
constexpr Patterns kFp16{0x7C00, {0x7E00, 0x7FFF, 0xFE01, 0x7C01}};
constexpr Patterns kBf16{0x7F80, {0x7FC0, 0x7FFF, 0xFF81, 0x7F81}};

// The rows, blocks and columns a class touches: its own generator, so the
// case's ordinary data is the same with and without the class.
std::mt19937_64 class_rng(const CaseSpec& s) {
  std::seed_seq seq{static_cast<uint64_t>(s.seed), static_cast<uint64_t>(s.value_class),
                    static_cast<uint64_t>(s.M),    static_cast<uint64_t>(s.N),
                    static_cast<uint64_t>(s.K),    static_cast<uint64_t>(s.dtype)};
  return std::mt19937_64(seq);
}

int64_t pick(std::mt19937_64& rng, int64_t count) {
  return std::uniform_int_distribution<int64_t>(0, count - 1)(rng);
}

[[noreturn]] void nothing_to_change(const CaseSpec& s, const char* what) {
  throw std::invalid_argument(std::string("inject_value_class: value_class = ") +
                              value_class_name(s.value_class) + ": " + what + " (case " + s.name() +
                              ")");
}

// An infinity (of `sign`) once in row 0, twice in row M - 1 (when M > 1).
void inject_a_inf(const CaseSpec& s, CaseInputs& in, uint16_t bits, std::mt19937_64& rng) {
  in.A[pick(rng, s.K)] = bits;
  if (s.M > 1) {
    const int64_t row = (s.M - 1) * s.K;
    in.A[row + pick(rng, s.K)] = bits;
    in.A[row + pick(rng, s.K)] = bits;
  }
}

void inject_a(const CaseSpec& s, CaseInputs& in, const Patterns& pat, std::mt19937_64& rng) {
  if (s.M == 0 || s.K == 0) nothing_to_change(s, "A is empty");
  const int64_t last_row = (s.M - 1) * s.K;
  switch (s.value_class) {
    case ValueClass::a_nan:
      in.A[0] = pat.nans[s.seed % 4];
      in.A[last_row + s.K - 1] = pat.nans[(s.seed + 1) % 4];
      in.A[last_row + pick(rng, s.K)] = pat.nans[(s.seed + 2) % 4];
      break;
    case ValueClass::a_inf:
      inject_a_inf(s, in, pat.inf, rng);
      break;
    case ValueClass::a_neg_inf:
      inject_a_inf(s, in, static_cast<uint16_t>(pat.inf | 0x8000), rng);
      break;
    case ValueClass::a_neg_zero:
      for (auto& a : in.A) {
        if ((a & 0x7FFF) == 0) a = 0x8000;
      }
      // A whole row of -0 (its outputs are +0 plus the bias); with one row,
      // its second half, so A stays nonzero.
      for (int64_t k = s.M > 1 ? 0 : s.K / 2; k < s.K; ++k) in.A[last_row + k] = 0x8000;
      if (s.M > 1 && s.N > 0) {
        // One row of W made non-negative (codes and scales), its bias -0: every
        // product of that output is -0, and the sum, which starts at +0, is +0,
        // plus -0 still +0. A sum started at -0 would give -0.
        const int64_t n = pick(rng, s.N), row_bytes = (s.K + 1) / 2;
        const int64_t blocks = ref::scale_blocks_per_row(s.K, s.block_size);
        for (int64_t i = n * row_bytes; i < (n + 1) * row_bytes; ++i) in.W.packed[i] &= 0x77;
        for (int64_t b = n * blocks; b < (n + 1) * blocks; ++b) in.W.scales[b] &= 0x7F;
        if (!in.bias.empty()) in.bias[n] = 0x8000;
      }
      break;
    case ValueClass::a_subnormal: {
      // +-1..7 ulps of the smallest subnormal (fp16 2^-24, bf16 2^-133): a
      // product with an exact-mode weight (>= 2^-5) stays on a grid of
      // 2^-29 or 2^-138, and a row's sums far below 2^24 units of it, so the
      // row is exact on its own; a bias would not be (a unit of 2^0 next to
      // 2^-29), so the bias, if any, becomes +-0.
      const int64_t first = s.M > 1 ? last_row : 0;
      std::uniform_int_distribution<int> ulps(-7, 7);
      for (int64_t i = first; i < last_row + s.K; ++i) {
        const int u = ulps(rng);
        in.A[i] = static_cast<uint16_t>((u < 0 ? 0x8000 : 0) | (u < 0 ? -u : u));
      }
      in.A[first] = 0x0001;
      for (auto& b : in.bias) b = (rng() & 1) ? 0x8000 : 0x0000;
      break;
    }
    default:
      break;
  }
}

void inject_scale(const CaseSpec& s, CaseInputs& in, std::mt19937_64& rng) {
  if (s.N == 0 || s.K == 0) nothing_to_change(s, "there are no scales");
  const int64_t blocks = ref::scale_blocks_per_row(s.K, s.block_size);
  auto& sc = in.W.scales;
  const auto whole_rows = [&](uint8_t sign) {
    // Row 0 and one more; every block of a row, so a row's terms share one grid.
    for (int64_t row : {int64_t{0}, pick(rng, s.N)}) {
      for (int64_t b = 0; b < blocks; ++b)
        sc[row * blocks + b] = static_cast<uint8_t>(sign | (1 + pick(rng, 7)));
    }
  };
  const auto scattered = [&](uint8_t byte, int one_in) {
    sc[0] = byte;
    for (auto& x : sc) {
      if (pick(rng, one_in) == 0) x = byte;
    }
  };
  switch (s.value_class) {
    case ValueClass::scale_nan_7f:
    case ValueClass::scale_nan_ff: {
      // An even block of row 0 and an odd one of row N - 1 (when there is
      // one): gemv_mma reads scales in pairs, low byte first.
      const uint8_t nan = s.value_class == ValueClass::scale_nan_7f ? 0x7F : 0xFF;
      sc[0] = nan;
      sc[(s.N - 1) * blocks + (blocks > 1 ? 1 : 0)] = nan;
      break;
    }
    case ValueClass::scale_subnormal:
      whole_rows(0x00);
      break;
    case ValueClass::scale_neg_subnormal:
      whole_rows(0x80);
      break;
    case ValueClass::scale_zero:
      scattered(0x00, 6);
      break;
    case ValueClass::scale_neg_zero:
      scattered(0x80, 6);
      break;
    case ValueClass::scale_negative:
      for (auto& x : sc) {
        if (pick(rng, 2) == 0) x |= 0x80;
      }
      sc[0] |= 0x80;
      break;
    default:
      break;
  }
}

float float_from_bits(uint32_t u) {
  float f;
  static_assert(sizeof f == sizeof u, "fp32");
  std::memcpy(&f, &u, sizeof f);
  return f;
}

void inject_g(const CaseSpec& s, CaseInputs& in) {
  const bool fp16 = s.dtype == DType::fp16;
  float& g = in.W.global_scale;
  switch (s.value_class) {
    case ValueClass::g_zero:
      g = 0.0f;
      break;
    case ValueClass::g_neg_zero:
      g = -0.0f;
      break;
    // 3 * 2^-129, an fp32 subnormal: fp16 weights are all 0, bf16 ones bf16
    // subnormals (>= 0.5 * 0.25 * g = 1.5 * 2^-131, on bf16's 2^-133 grid).
    case ValueClass::g_subnormal:
      g = 0x1.8p-128f;
      break;
    case ValueClass::g_pow2_edge: {
      const std::vector<float> edges = pow2_edges(fp16);
      g = edges[s.seed % edges.size()];
      break;
    }
    case ValueClass::g_huge:
      g = 0x1.8p100f;
      break;
    case ValueClass::g_inf:
      g = std::numeric_limits<float>::infinity();
      break;
    case ValueClass::g_neg_inf:
      g = -std::numeric_limits<float>::infinity();
      break;
    case ValueClass::g_nan:
      g = float_from_bits(s.seed % 2 ? 0xFFC00001u : 0x7FC00000u);
      break;
    case ValueClass::g_negative:
      g = -0.25f;
      break;
    case ValueClass::g_not_pow2:
      // Every scale 1.0, so a row's weights are the eight round(e2m1 * 0.3f):
      // within a factor 12 of each other, their sums exact (fp16: < 2^23 units).
      g = 0.3f;
      for (auto& x : in.W.scales) x = 0x38;
      break;
    default:
      break;
  }
  // A bias on a grid far from the weights' (2^0 next to 2^-120 or 2^100)
  // would make the sums inexact: each bias value is scaled by |g| where that
  // is exact in the dtype, so it stays on the weights' grid.
  const double scale = std::fabs(static_cast<double>(g));
  if (!(scale > 0 && std::isfinite(scale))) return;
  const ref::Half kind = s.dtype == DType::fp16 ? ref::Half::fp16 : ref::Half::bf16;
  for (auto& b : in.bias) {
    const double scaled = ref::half_to_double(b, kind) * scale;
    const uint16_t bits = ref::round_to_half(scaled, kind);
    if (std::isfinite(scaled) && ref::half_to_double(bits, kind) == scaled) b = bits;
  }
}

void inject_bias(const CaseSpec& s, CaseInputs& in, const Patterns& pat, std::mt19937_64& rng) {
  if (in.bias.empty()) {
    if (s.N == 0) nothing_to_change(s, "N is 0");
    nothing_to_change(s, "the case has no bias");
  }
  // Column 0 and about a third of the others; every column with K == 0,
  // where the output is the bias alone.
  const auto columns = [&](auto value) {
    for (int64_t n = 0; n < s.N; ++n) {
      if (n == 0 || s.K == 0 || pick(rng, 3) == 0) in.bias[n] = value(n);
    }
  };
  switch (s.value_class) {
    case ValueClass::bias_zero:
      columns([](int64_t) { return uint16_t{0x0000}; });
      break;
    case ValueClass::bias_neg_zero:
      columns([](int64_t) { return uint16_t{0x8000}; });
      break;
    case ValueClass::bias_inf:
      columns([&](int64_t) { return pat.inf; });
      break;
    case ValueClass::bias_neg_inf:
      columns([&](int64_t) { return static_cast<uint16_t>(pat.inf | 0x8000); });
      break;
    case ValueClass::bias_nan:
      columns([&](int64_t n) { return pat.nans[(s.seed + n) % 4]; });
      break;
    default:
      break;
  }
}

}  // namespace

const std::vector<ValueClass>& all_value_classes() {
  static const std::vector<ValueClass> classes = [] {
    std::vector<ValueClass> out;
    for (const ClassName& e : kClasses) {
      if (e.c != ValueClass::none) out.push_back(e.c);
    }
    return out;
  }();
  return classes;
}

const char* value_class_name(ValueClass c) { return entry(c).name; }

std::optional<ValueClass> parse_value_class(const std::string& name) {
  for (const ClassName& e : kClasses) {
    if (name == e.name) return e.c;
  }
  return std::nullopt;
}

ValueInput value_class_input(ValueClass c) { return entry(c).input; }

std::vector<float> pow2_edges(bool fp16) {
  // fp16: both GEMVs' window is 2^-14..2^4. bf16: gemv_scalar's starts at
  // 2^-123, gemv_mma's is 2^-7..2^0 (gemv_scalar's end, 2^127, makes
  // products overflow fp32, which no exact case can have).
  if (fp16) return {0x1p-15f, 0x1p-14f, 0x1p4f, 0x1p5f};
  return {0x1p-124f, 0x1p-123f, 0x1p-8f, 0x1p-7f, 0x1p0f, 0x1p1f};
}

void inject_value_class(const CaseSpec& s, CaseInputs& in) {
  if (s.value_class == ValueClass::none) return;
  auto rng = class_rng(s);
  const Patterns& pat = s.dtype == DType::fp16 ? kFp16 : kBf16;
  switch (value_class_input(s.value_class)) {
    case ValueInput::a:
      inject_a(s, in, pat, rng);
      break;
    case ValueInput::scale:
      inject_scale(s, in, rng);
      break;
    case ValueInput::g:
      inject_g(s, in);
      break;
    case ValueInput::bias:
      inject_bias(s, in, pat, rng);
      break;
    case ValueInput::none:
      break;
  }
}

}  // namespace nvfp4
