#include "exactness.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <vector>

#include "checks.h"

namespace nvfp4::ref {

namespace {

constexpr int kFp32MinGridExp = -149;      // fp32 subnormal spacing
constexpr double kUnitLimit = 16777216.0;  // 2^24
constexpr double kInf = std::numeric_limits<double>::infinity();

// The exponent of the lowest set bit of a finite nonzero double: v = odd * 2^result.
int lowest_bit_exponent(double v) {
  int e = 0;
  const double m = std::frexp(std::fabs(v), &e);                // |v| = m * 2^e, m in [0.5, 1)
  auto significand = static_cast<uint64_t>(std::ldexp(m, 53));  // exact: 53-bit integer
  return e - 53 + __builtin_ctzll(significand);
}

// One output element's terms, verdict and explanation.
struct ElementVerdict {
  bool exact = true;
  double bits = 0;
  std::string why;
};

// terms[k] = A[m,k]*W[n,k] for k < K, then the bias if there is one.
std::string term_name(int64_t m, int64_t n, int64_t k, int64_t K) {
  if (k == K) return "bias[" + std::to_string(n) + "]";
  return detail::element_name("A", m, k) + "*" + detail::element_name("W", n, k);
}

ElementVerdict judge_terms(const std::vector<double>& terms, int64_t m, int64_t n, int64_t K) {
  const std::string element = detail::element_name("Y", m, n);
  ElementVerdict v;
  int e = std::numeric_limits<int>::max();
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const double t = terms[i];
    if (!std::isfinite(t)) {
      return {false, kInf,
              element + ": term " + term_name(m, n, static_cast<int64_t>(i), K) + " = " +
                  detail::float_text(t) + ": not finite"};
    }
    if (t != 0) e = std::min(e, lowest_bit_exponent(t));
  }
  if (e == std::numeric_limits<int>::max()) return v;  // all terms zero
  if (e < kFp32MinGridExp) {
    return {false, kInf,
            element + ": term grid 2^" + std::to_string(e) + " is below the fp32 spacing 2^-149"};
  }
  double units = 0, magnitude = 0;
  for (double t : terms) {
    // Each addend is an integer. Past 2^53 the running sum may round, but rounding is
    // monotone, so the comparison with 2^24 below still gives the true answer.
    units += std::ldexp(std::fabs(t), -e);
    magnitude += std::fabs(t);
  }
  v.bits = std::log2(units);
  if (units >= kUnitLimit) {
    v.exact = false;
    v.why = element + ": sum of |terms| = " + detail::float_text(units) + " units of 2^" +
            std::to_string(e) + " (" + detail::float_text(v.bits) + " bits) >= 2^24";
  } else if (magnitude > FLT_MAX) {
    v.exact = false;
    v.why = element + ": sum of |terms| = " + detail::float_text(magnitude) + " overflows fp32";
  }
  return v;
}

}  // namespace

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
  bool have_worst = false;
  std::vector<double> terms;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      terms.clear();
      // Each product of two fp16/bf16 values is exact in fp64, so these are the true terms.
      for (int64_t k = 0; k < K; ++k) {
        terms.push_back(half_to_double(A[m * K + k], kind) * half_to_double(W[n * K + k], kind));
      }
      if (bias != nullptr) terms.push_back(half_to_double(bias[n], kind));
      const ElementVerdict v = judge_terms(terms, m, n, K);
      // A failure outranks any success; within the same verdict, more bits is worse.
      const bool worse = !have_worst || (!v.exact && report.exact) ||
                         (v.exact == report.exact && v.bits > report.worst_bits);
      if (worse) {
        report.exact = v.exact;
        report.worst_m = m;
        report.worst_n = n;
        report.worst_bits = v.bits;
        report.why = v.why;
        have_worst = true;
      }
    }
  }
  return report;
}

}  // namespace nvfp4::ref
