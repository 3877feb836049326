#include "exactness.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "checks.h"

namespace nvfp4::ref {

namespace {

constexpr double kUnitLimit = 16777216.0;  // 2^24
constexpr double kInf = std::numeric_limits<double>::infinity();

// The exponent of the lowest set bit of a finite nonzero double: v = odd * 2^result.
// From the encoding (IEEE 754 binary64): a normal |v| is (2^52 + fraction) *
// 2^(field - 1075), a subnormal one fraction * 2^-1074 (right for every
// double, though the terms here never are subnormal: products of fp16/bf16
// values and a bias are at least 2^-266). frexp and ldexp gave the same
// exponent at several times the cost.
int lowest_bit_exponent(double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  const int field = static_cast<int>((bits >> 52) & 0x7FF);
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  if (field == 0) return -1074 + __builtin_ctzll(fraction);
  return field - 1075 + __builtin_ctzll(fraction | (uint64_t{1} << 52));
}

// Why an element's finite part is inexact, with the numbers that say so.
enum class Inexact { no, grid, units, overflow };

// One output element's terms and verdict. The explanation is formatted only
// for the element the report keeps (explain()): every case's oracle judges
// every element, and most elements of random data are inexact.
struct ElementVerdict {
  bool exact = true;
  double bits = 0;
  Inexact why = Inexact::no;
  int grid_exp = 0;
  double units = 0, magnitude = 0;
  SumOutcome outcome = SumOutcome::exact;
};

std::string explain(const ElementVerdict& v, int64_t m, int64_t n) {
  const std::string element = detail::element_name("Y", m, n);
  switch (v.why) {
    case Inexact::no:
      return "";
    case Inexact::grid:
      return element + ": term grid 2^" + std::to_string(v.grid_exp) + " is below 2^" +
             std::to_string(kMinGridExp) + " (fp32's spacing 2^-149 times gemv_mma's 2^7)";
    case Inexact::units:
      return element + ": sum of |terms| = " + detail::float_text(v.units) + " units of 2^" +
             std::to_string(v.grid_exp) + " (" + detail::float_text(v.bits) + " bits) >= 2^24";
    case Inexact::overflow:
      return element + ": sum of |terms| = " + detail::float_text(v.magnitude) + " overflows fp32";
  }
  return "";
}

// What the non-finite terms make of the sum: NaN beats everything, then an infinity of one
// sign; `finite_can_overflow` turns an infinity into "anything" (a finite overflow of the
// other sign would make NaN in some orders).
struct NonFinite {
  bool nan = false, pos_inf = false, neg_inf = false;
  bool any() const { return nan || pos_inf || neg_inf; }
};

SumOutcome outcome_for(const NonFinite& nf, bool exact_finite, bool finite_can_overflow) {
  if (nf.nan || (nf.pos_inf && nf.neg_inf)) return SumOutcome::nan;
  if (finite_can_overflow) return SumOutcome::overflow;
  if (nf.pos_inf) return SumOutcome::pos_inf;
  if (nf.neg_inf) return SumOutcome::neg_inf;
  return exact_finite ? SumOutcome::exact : SumOutcome::rounded;
}

// Whether rounded fp32 partial sums of finite terms whose magnitudes add up to `magnitude`
// might overflow: each of the `count` roundings grows a partial sum's magnitude by at most a
// factor 1 + 2^-24, and exp(count * 2^-24) bounds their product.
bool may_overflow(double magnitude, std::size_t count) {
  return magnitude * std::exp(static_cast<double>(count) * 0x1p-24) > FLT_MAX;
}

// The lowest set bit's exponent of a nonzero finite value, 0 for the others
// (never read: their terms are zero or non-finite).
int grid_exponent(double v) { return std::isfinite(v) && v != 0 ? lowest_bit_exponent(v) : 0; }

// grid_exponent of each value. A product of two nonzero finite fp16/bf16
// values is exact and normal in fp64, and its odd part is the product of the
// factors' odd parts, itself odd, so its lowest set bit's exponent is the
// sum of theirs: the grid of A[m,k]*W[n,k] costs an addition, not a look at
// the product's bits.
std::vector<int> grid_exponents(const std::vector<double>& values) {
  std::vector<int> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = grid_exponent(values[i]);
  return out;
}

// One output element's terms: A[m,k]*W[n,k] for every k (the rows a and w,
// with their values' grid exponents), then the bias if there is one. Each
// term is formed where it is used, in the same order in both passes, so the
// sums are those of a list of the terms.
struct ElementTerms {
  const double *a, *w;
  const int *a_exp, *w_exp;
  int64_t K;
  const double* bias;  // null: none
  int bias_exp;

  std::size_t count() const { return static_cast<std::size_t>(K) + (bias != nullptr); }
  // f(term, its lowest-bit exponent when nonzero and finite)
  template <typename F>
  void each(F&& f) const {
    for (int64_t k = 0; k < K; ++k) f(a[k] * w[k], a_exp[k] + w_exp[k]);
    if (bias != nullptr) f(*bias, bias_exp);
  }
};

ElementVerdict judge_terms(const ElementTerms& terms) {
  NonFinite nf;
  ElementVerdict v;
  int e = std::numeric_limits<int>::max();
  double magnitude = 0;
  terms.each([&](double t, int t_exp) {
    if (std::isnan(t)) {
      nf.nan = true;
    } else if (std::isinf(t)) {
      (t > 0 ? nf.pos_inf : nf.neg_inf) = true;
    } else {
      magnitude += std::fabs(t);
      if (t != 0) e = std::min(e, t_exp);
    }
  });
  const bool can_overflow = may_overflow(magnitude, terms.count());
  if (e == std::numeric_limits<int>::max()) {  // every finite term is zero
    v.outcome = outcome_for(nf, true, false);
    return v;
  }
  if (e < kMinGridExp) {
    v.exact = false;
    v.bits = kInf;
    v.why = Inexact::grid;
    v.grid_exp = e;
  } else {
    double units = 0;
    // Each addend is an integer. Past 2^53 the running sum may round, but rounding is
    // monotone, so the comparison with 2^24 below still gives the true answer.
    // |t| * 2^-e is exact, as ldexp(|t|, -e) was: an integer below 2^399
    // (|t| < 2^257, -e <= -kMinGridExp = 142), and 2^-e is normal (e <= 256).
    const double unit_scale = std::ldexp(1.0, -e);
    terms.each([&](double t, int) {
      if (std::isfinite(t)) units += std::fabs(t) * unit_scale;
    });
    v.bits = std::log2(units);
    if (units >= kUnitLimit) {
      v.exact = false;
      v.why = Inexact::units;
      v.grid_exp = e;
      v.units = units;
    } else if (magnitude > FLT_MAX) {
      v.exact = false;
      v.why = Inexact::overflow;
      v.magnitude = magnitude;
    }
  }
  // An exact finite part never overflows (its sum of magnitudes is at most FLT_MAX).
  v.outcome = outcome_for(nf, v.exact, !v.exact && can_overflow);
  return v;
}

}  // namespace

const char* sum_outcome_name(SumOutcome o) {
  switch (o) {
    case SumOutcome::nan:
      return "nan";
    case SumOutcome::pos_inf:
      return "+inf";
    case SumOutcome::neg_inf:
      return "-inf";
    case SumOutcome::exact:
      return "exact";
    case SumOutcome::rounded:
      return "rounded";
    case SumOutcome::overflow:
      return "overflow";
  }
  return "?";
}

bool outcome_is_determined(SumOutcome o) {
  return o != SumOutcome::rounded && o != SumOutcome::overflow;
}

ExactnessReport analyze_exactness(const uint16_t* A, const uint16_t* W, const uint16_t* bias,
                                  int64_t M, int64_t N, int64_t K, Half kind) {
  constexpr const char* fn = "analyze_exactness";
  detail::check_nonnegative(fn, "M", M);
  detail::check_nonnegative(fn, "N", N);
  detail::check_nonnegative(fn, "K", K);
  detail::check_half(fn, kind);
  const int64_t a_count = detail::checked_product(fn, "M", M, "K", K);
  const int64_t w_count = detail::checked_product(fn, "N", N, "K", K);
  detail::checked_product(fn, "M", M, "N", N);
  detail::check_pointer(fn, "A", A, a_count);
  detail::check_pointer(fn, "W", W, w_count);

  ExactnessReport report;
  report.outcomes.reserve(static_cast<std::size_t>(M * N));
  bool have_worst = false;
  // Each operand decoded once, not once per output it meets.
  const std::vector<double> a = halves_to_doubles(A, a_count, kind);
  const std::vector<double> w = halves_to_doubles(W, w_count, kind);
  const std::vector<int> a_exp = grid_exponents(a), w_exp = grid_exponents(w);
  // The bias decoded once per column, not once per output element.
  const std::vector<double> b =
      bias != nullptr ? halves_to_doubles(bias, N, kind) : std::vector<double>{};
  const std::vector<int> b_exp = grid_exponents(b);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      // Each product of two fp16/bf16 values is exact in fp64 (inf * 0 is NaN, as in fp32),
      // so these are the true terms.
      const ElementTerms terms{a.data() + m * K,
                               w.data() + n * K,
                               a_exp.data() + m * K,
                               w_exp.data() + n * K,
                               K,
                               bias != nullptr ? &b[n] : nullptr,
                               bias != nullptr ? b_exp[n] : 0};
      const ElementVerdict v = judge_terms(terms);
      report.outcomes.push_back(v.outcome);
      // A failure outranks any success; within the same verdict, more bits is worse.
      const bool worse = !have_worst || (!v.exact && report.exact) ||
                         (v.exact == report.exact && v.bits > report.worst_bits);
      if (worse) {
        report.exact = v.exact;
        report.worst_m = m;
        report.worst_n = n;
        report.worst_bits = v.bits;
        report.why = explain(v, m, n);
        have_worst = true;
      }
    }
  }
  return report;
}

}  // namespace nvfp4::ref
