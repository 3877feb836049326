// The dispatcher: the route table (route_table.h) read as one ordered chain
// of named predicates, DESIGN.md's table written as data. select_route is
// pure and total: every Problem gets a RouteChoice or, for an impossible
// force_route, an error naming the predicate that fails. It builds no text;
// explain_route gives the same decision in words.
//
// Reason codes (the gate requires each to be executed) are the table's:
// `nvfp4-harness routes` lists them, route_reasons(route) gives them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernels/nvfp4_matmul/nvfp4_types.h"
#include "kernels/nvfp4_matmul/route_table.h"

namespace nvfp4 {

// The device capabilities the chain tests, in one place: the capability
// family (properties/nvfp4_matmul/families.cc) builds its cases at and around these.
inline constexpr int kMinMmaSm = 80;  // gemv_mma: sm >= 80 (mma.sync m16n8k16 with bf16)
inline constexpr int kNativeSmFirst =
    120;  // native_sm120: sm 12.x, kNativeSmFirst <= sm < kNativeSmEnd
inline constexpr int kNativeSmEnd = 130;

// The address alignments (bytes) the chain tests. Problem carries addresses
// modulo 16 (weight_scale's modulo 4), so each divides that.
inline constexpr uint32_t kDecodeOperandAlignment = 16;  // A and B: the GEMVs' 16-byte loads
inline constexpr uint32_t kDecodeScalesAlignment =
    4;  // weight_scale: the GEMVs' 4-byte scale reads
inline constexpr uint32_t kFusedOperandAlignment = 16;  // A and B: prefill_fused's cp.async 16
inline constexpr uint32_t kFusedScalesAlignment = 4;    // weight_scale: its 4-byte cp.async
inline constexpr uint32_t kVec8CodesAlignment = 4;      // B: prefill_vec8's 32-bit code loads
inline constexpr uint32_t kVec8ScratchAlignment = 16;   // scratch: prefill_vec8's 16-byte stores
static_assert(16 % kDecodeOperandAlignment == 0 && 4 % kDecodeScalesAlignment == 0 &&
                  16 % kVec8CodesAlignment == 0 && 16 % kVec8ScratchAlignment == 0,
              "each alignment divides the modulus Problem keeps");

// The reason of every forced launch (Options::force_route).
inline constexpr std::string_view kForcedReason = "forced";

// The route and reason code; allocates nothing unless it throws (a refused
// force_route: std::invalid_argument naming the predicate that fails).
RouteChoice select_route(const Problem& problem, const Caps& caps, const Options& options);

// The same decision with its variant and its explanation: every route the
// chain tried, in order, with the predicate that passed it over, then the
// route taken, its reason code and the predicates that held.
Decision explain_route(const Problem& problem, const Caps& caps, const Options& options);

// The reason codes a route can be taken for (without forcing), in chain order.
const std::vector<std::string>& route_reasons(Route route);

// Empty when `route` could run `problem` on `caps`; else the first hard
// precondition it fails, with the values ("K % 128 == 0 (K = 96) fails").
std::string route_precondition_failure(Route route, const Problem& problem, const Caps& caps);

// Where prefill_fused is faster than dequant + GEMM (prefill_vec8) on the
// H200, so the chain prefers it (route_table.cc, kFusedMAtMostCrossover,
// says where each bound was measured): in bands of M, each on weights of
// at least its number of values (N x K; small weights leave the fused
// kernel's blocks too few to beat the dequant and the GEMM's small tiles),
// and from kFusedTwoBlocksMinM to kFusedTwoBlocksMaxM (two blocks over M,
// their rows 87.5 % full or more) and at kFusedFullBlocksMinM..MaxM (three
// and four whole blocks) where the plan's blocks fill their rounds
// (prefill_fused_fills_its_rounds). Elsewhere the GEMM's larger tiles win.
struct FusedBand {
  int64_t max_m;        // the band holds M up to this (and above the band before)
  int64_t min_weights;  // N x K values, at least
  bool needs_wgmma;     // its M takes the wgmma kernel (Caps::wgmma)
};
inline constexpr FusedBand kFusedBands[] = {
    {16, 0, false},
    {32, int64_t{1} << 20, false},
    {64, int64_t{1} << 23, false},
    {128, int64_t{1} << 23, true},
    {256, int64_t{1} << 24, true},
};
inline constexpr int64_t kFusedMaxM = kFusedBands[2].max_m;       // the last band of mma.sync alone
inline constexpr int64_t kFusedMaxMWgmma = kFusedBands[4].max_m;  // the last band with wgmma
inline constexpr int64_t kFusedTwoBlocksMinM = 448;
inline constexpr int64_t kFusedTwoBlocksMaxM = 512;
// And at M = 768 and 1024, three and four whole blocks of
// kFusedFullBlockRows rows over M, where the plan's blocks fill their rounds
// to kFusedFullBlocksFillPercent (prefill_fused_plan.h): the only M between
// 512 and 2048 measured with the current kernel (2026-12-06); M = 640
// (blocks 83 % full) lost on most shapes, so M between them stays with the
// GEMM until measured.
inline constexpr int64_t kFusedFullBlockRows = 256;
inline constexpr int64_t kFusedFullBlocksMinM = 768;
inline constexpr int64_t kFusedFullBlocksMaxM = 1024;
static_assert(!kFusedBands[2].needs_wgmma && kFusedBands[3].needs_wgmma,
              "kFusedMaxM ends the bands without wgmma");
bool prefill_fused_preferred(int64_t M, int64_t N, int64_t K, const Caps& caps);
// Where the plan's rounds decide it: wgmma and kFusedTwoBlocksMinM <= M <=
// kFusedTwoBlocksMaxM, or M a multiple of kFusedFullBlockRows from
// kFusedFullBlocksMinM to kFusedFullBlocksMaxM.
bool prefill_fused_rounds_decide(int64_t M, const Caps& caps);
bool prefill_fused_full_blocks(int64_t M, const Caps& caps);  // the second of those

// Rows of W (output columns) one gemv_scalar warp computes: 4, 2 or 1, the
// largest that divides N.
int gemv_scalar_rows_per_warp(int64_t N);

// The capability native_sm120 needs and this device lacks; empty when it has
// it (the native row's missing_capability).
std::string native_sm120_missing_capability(const Caps& caps);

}  // namespace nvfp4
