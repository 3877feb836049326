// reference/nvfp4_matmul/gemm.h -- the fp64 reference GEMM: Y = A * W^T (+ bias).
#pragma once

#include <cstdint>
#include <vector>

#include "float16.h"

namespace nvfp4::ref {

// Y[m,n] = sum_k A[m,k] * W[n,k] (+ bias[n]), accumulated in fp64 in k order, bias last.
// A: [M,K], W: [N,K] (the dequantized weight, not transposed), bias: [N] or nullptr; all are
// bit patterns of `kind`. Returns [M,N] doubles. Every product of two fp16/bf16 values is exact
// in fp64; the sums are exact whenever exactness.h says the case is exact.
std::vector<double> gemm_fp64(const uint16_t* A, const uint16_t* W, const uint16_t* bias, int64_t M,
                              int64_t N, int64_t K, Half kind);

// round_to_half of every element.
std::vector<uint16_t> round_output(const std::vector<double>& y, Half kind);

}  // namespace nvfp4::ref
