// reference/exactness.h -- can every fp32 partial sum of a case be held exactly?
//
// An fp32 accumulator (any order, any split across threads, tensor-core or scalar) computes
// Y[m,n] exactly -- so every route gives the same bits, the fp64 reference's bits -- when:
//   * every term t (each product A[m,k]*W[n,k] and the bias) is an integer multiple of one grid
//     2^e, e = the lowest set bit over the element's nonzero terms, with 2^e >= 2^-149 (the
//     fp32 subnormal spacing), and
//   * the SUM OF MAGNITUDES of the terms, in units of 2^e, is < 2^24.
// Then every subset sum is an integer n * 2^e with |n| < 2^24: 24 significant bits, which fp32
// holds exactly whatever the summation order, provided also
//   * nothing overflows: (sum of magnitudes) <= FLT_MAX, which bounds every term and partial sum.
// Small-integer fills (as CUTLASS testbeds use) meet this by construction.
#pragma once

#include <cstdint>
#include <string>

#include "float16.h"

namespace nvfp4::ref {

struct ExactnessReport {
  bool exact = true;
  // The element that decides the verdict: if any element fails, the failing one needing the
  // most bits (ties: first in row-major order); otherwise the one needing the most bits.
  // -1 when there is no element (M == 0 or N == 0).
  int64_t worst_m = -1, worst_n = -1;
  // log2 of that element's sum of magnitudes in units of 2^e (0 for an all-zero element;
  // +inf for a non-finite term or a grid below 2^-149). Exact needs < 24.
  double worst_bits = 0;
  std::string why;  // names the element and the rule it breaks ("" when exact)
};

// Same shapes and argument rules as gemm_fp64.
ExactnessReport analyze_exactness(const uint16_t* A, const uint16_t* W, const uint16_t* bias,
                                  int64_t M, int64_t N, int64_t K, Half kind);

}  // namespace nvfp4::ref
