// reference/nvfp4_matmul/exactness.h -- can every fp32 partial sum of a case be held exactly, and
// what does an fp32 sum of each output element give whatever its order?
//
// An fp32 accumulator (any order, any split across threads, tensor-core or scalar) computes
// Y[m,n] exactly -- so every route gives the same bits, the fp64 reference's bits -- when its
// FINITE terms (each product A[m,k]*W[n,k] and the bias) meet:
//   * every finite term is an integer multiple of one grid 2^e, e = the lowest set bit over the
//     element's nonzero finite terms, with 2^e >= 2^-142 (see kMinGridExp), and
//   * the SUM OF MAGNITUDES of the finite terms, in units of 2^e, is < 2^24.
// Then every subset sum is an integer n * 2^e with |n| < 2^24: 24 significant bits, which fp32
// holds exactly whatever the summation order, provided also
//   * nothing overflows: (sum of magnitudes) <= FLT_MAX, which bounds every term and partial sum.
// Non-finite terms (a NaN or an infinite activation, weight or bias; inf * 0) do not make an
// element inexact: with the finite part exact, the sum is NaN if any term is NaN or terms of
// both infinities meet, else the infinity there is, in any order (DESIGN.md, "Special values").
// Small-integer fills (as CUTLASS testbeds use) meet this by construction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "float16.h"

namespace nvfp4::ref {

// The finite terms' grid must be at least 2^kMinGridExp: fp32's subnormal spacing 2^-149 times
// 2^7, the most gemv_mma's bf16 fast path scales its fp32 sum by afterwards (DESIGN.md, "Special
// values"): it sums products up to 2^7 times smaller, whose grid must still be >= 2^-149.
inline constexpr int kMinGridExp = -142;

// What an fp32 sum of one element's terms, starting from +0 and rounding each partial sum, gives
// in every order, and so on every route:
enum class SumOutcome {
  nan,       // a NaN term, or terms +inf and -inf: NaN whatever the finite terms do
  pos_inf,   // +inf terms (no -inf, no NaN), the finite terms far from overflowing: +inf
  neg_inf,   // the same with -inf
  exact,     // finite terms exact (the rule above) and no non-finite term: one value
  rounded,   // every term finite, no overflow possible: a finite value that depends on the order
  overflow,  // the finite terms might overflow fp32 (|sum| of magnitudes too large): finite,
             // +-inf or NaN, depending on the order
};
const char* sum_outcome_name(SumOutcome o);

// Whether the outcome is the same bits in every order (everything but rounded and overflow).
bool outcome_is_determined(SumOutcome o);

struct ExactnessReport {
  bool exact = true;
  // The element that decides the verdict: if any element fails, the failing one needing the
  // most bits (ties: first in row-major order); otherwise the one needing the most bits.
  // -1 when there is no element (M == 0 or N == 0).
  int64_t worst_m = -1, worst_n = -1;
  // log2 of that element's sum of finite magnitudes in units of 2^e (0 for an all-zero
  // element; +inf for a grid below 2^kMinGridExp). Exact needs < 24.
  double worst_bits = 0;
  std::string why;  // names the element and the rule it breaks ("" when exact)
  // Every element's outcome, [M, N] row-major.
  std::vector<SumOutcome> outcomes;
};

// Same shapes and argument rules as gemm_fp64.
ExactnessReport analyze_exactness(const uint16_t* A, const uint16_t* W, const uint16_t* bias,
                                  int64_t M, int64_t N, int64_t K, Half kind);

}  // namespace nvfp4::ref
