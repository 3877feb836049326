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

// The device capabilities the chain tests, in one place: the capability
// family (properties/families.cc) builds its cases at and around these.
inline constexpr int kMinMmaSm = 80;        // gemv_mma: sm >= 80 (mma.sync m16n8k16 with bf16)
inline constexpr int kNativeSmFirst = 120;  // native_sm120: sm 12.x, kNativeSmFirst <= sm < kNativeSmEnd
inline constexpr int kNativeSmEnd = 130;

// The address alignments (bytes) the chain tests. Problem carries addresses
// modulo 16 (weight_scale's modulo 4), so each divides that.
inline constexpr uint32_t kDecodeOperandAlignment = 16;  // A and B: the GEMVs' 16-byte loads
inline constexpr uint32_t kDecodeScalesAlignment = 4;    // weight_scale: the GEMVs' 4-byte scale reads
inline constexpr uint32_t kVec8CodesAlignment = 4;       // B: prefill_vec8's 32-bit code loads
inline constexpr uint32_t kVec8ScratchAlignment = 16;    // scratch: prefill_vec8's 16-byte stores
static_assert(16 % kDecodeOperandAlignment == 0 && 4 % kDecodeScalesAlignment == 0 &&
                  16 % kVec8CodesAlignment == 0 && 16 % kVec8ScratchAlignment == 0,
              "each alignment divides the modulus Problem keeps");

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
