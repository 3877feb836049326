// The dispatcher: one ordered chain of named predicates, DESIGN.md's table
// written as code. select_route is pure and total: every Problem gets a
// Decision or, for an impossible force_route, an error naming the predicate
// that fails.
//
// Reason codes (the gate requires each to be executed):
//   empty          m_zero | n_zero | k_zero
//   gemv_mma       decode_mma
//   gemv_scalar    decode_k_not_multiple_of_128 | decode_sm_below_80
//   native_sm120   native_opted_in
//   prefill_vec8   m_above_8 | decode_block_size_not_16 | decode_unaligned |
//                  decode_k_not_multiple_of_32
//   prefill_scalar odd_block_size | k_not_multiple_of_8 | unaligned
//   any route      forced
#pragma once

#include <string>
#include <vector>

#include "kernels/nvfp4_types.h"

namespace nvfp4 {

Decision select_route(const Problem& problem, const Caps& caps, const Options& options);

// The reason codes a route can be taken for (without forcing), in chain order.
const std::vector<std::string>& route_reasons(Route route);

// Empty when `route` could run `problem` on `caps`; else the first hard
// precondition it fails, with the values ("K % 128 == 0 fails (K = 96)").
std::string route_precondition_failure(Route route, const Problem& problem, const Caps& caps);

// Rows of W (output columns) one gemv_scalar warp computes: 4, 2 or 1, the
// largest that divides N.
int gemv_scalar_rows_per_warp(int64_t N);

// The capability native_sm120 needs and this device lacks; empty when it has it.
std::string native_sm120_missing_capability(const Caps& caps);

}  // namespace nvfp4
