// How prefill_fused runs a problem: which block shape (prefill_fused.cuh)
// and how many slices of K across blocks. A function of M, N, K and whether
// the device has wgmma (Caps::wgmma), never of its speed or size: the host
// executor, which has wgmma (emulated), plans as an H200 does, adds the same
// parts in the same order and computes the same bits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nvfp4 {

// The block shapes, named by the rows of A x rows of W one block holds
// (prefill_fused.cuh, mma.sync). w128n128: prefill_fused_wgmma.cuh's 128 x 128
// block with sm_90a's wgmma, for 64 < M <= 128 where the device has it.
// w256n128: the same kernel with two tiles of A a block (each weight decoded
// once for 256 rows of A), for M > 128.
enum class FusedShape : uint8_t { m16n64, m32n128, m64n128, m128n128, w128n128, w256n128 };

// The shapes that run prefill_fused_wgmma.cuh (a device with wgmma only).
inline bool is_wgmma_shape(FusedShape s) {
  return s == FusedShape::w128n128 || s == FusedShape::w256n128;
}

struct FusedPlan {
  FusedShape shape;
  int32_t k_slices;  // 1: the blocks write Y; more: fp32 parts, then prefill_fused_sum
  // More than 1: none of the above runs, but the GEMV-shaped kernel
  // (gemv_mma_slices.cuh, two groups of 8 rows of A) over this many slices
  // of K, then prefill_fused_sum: for 8 < M <= kMaxFusedM where that
  // measured faster (PERF.md).
  uint32_t gemv_slices = 1;
  // More than 0 (wgmma shapes, one block over M, more tiles over N than
  // the plan's multiprocessors): the tiles fill whole rounds of the
  // multiprocessors but for these last ones, which run in a second launch
  // with K split into tail_k_slices slices (their parts, then
  // prefill_fused_sum over their columns), so the last round is that much
  // shorter. k_slices is then 1: the first launch writes Y.
  int64_t tail_tiles = 0;
  int32_t tail_k_slices = 1;
};

// The multiprocessors the split fills: the H200's, where the shapes were
// timed (PERF.md). A fixed number, not the device's: see above.
inline constexpr int64_t kFusedPlanMultiprocessors = 132;
inline constexpr int32_t kFusedMaxKSlices = 8;

// The shape by M (the smallest that holds M's rows, 128 rows a block above
// 64; with wgmma, w128n128 up to M = 128 and w256n128 above, which measured faster than the
// mma.sync shapes on the H200, PERF.md); then, when the shape's blocks over
// M and N leave some of the plan's multiprocessors without a block, the slices of K (1..8) that
// move the fewest bytes per wave-filled time (prefill_fused_plan.cc, split_cost), the fewest on a
// tie (the wgmma shapes' parts at half weight). A slice holds at least one 128-k step, and the
// parts fit in half the operator's [N, K] scratch (k_slices * 4 * M <= K). With wgmma and
// more tiles over N than multiprocessors (one block over M), the tiles past the last whole
// round may take a split of their own (tail_tiles; same model, same limits).
FusedPlan prefill_fused_plan(int64_t M, int64_t N, int64_t K, bool wgmma);

// Whether the plan's blocks fill the last round of the plan's block slots
// (kFusedPlanMultiprocessors times the shape's blocks an SM) to
// kFusedFullRoundPercent or more where K is split in one round (all blocks
// in one launch), or to kFusedFullRoundPercentOneSlice where it is not
// split (no parts, no sum to amortize); a tail split counts as filled (its
// first launch is whole rounds, its second the short split round of the
// tiles past them). On the H200 (2026-12-03, the call after 14:15 UTC,
// PERF.md) the wgmma kernel beat dequant + GEMM at M = 129 to 256 on such
// plans or tied (within 1 %: split rounds 85 % full, 7168 x 4096), and lost
// or tied on split rounds 73 % full and on K split over several rounds;
// one-slice rounds won from 70 % full (28672 x 4096), tail splits at 36 %
// (18944 x 3584) and 91 %. The dispatcher's crossover: dispatch.h.
inline constexpr int64_t kFusedFullRoundPercent = 80;
inline constexpr int64_t kFusedFullRoundPercentOneSlice = 66;
bool prefill_fused_fills_its_rounds(const FusedPlan& plan, int64_t M, int64_t N);

// The plan's last round of block slots (what prefill_fused_fills_its_rounds
// judges, and the crossover's explanation prints): its blocks, the slots,
// whether K is split, and whether the split's parts span several rounds.
// All zero for the GEMV-shaped path (no rounds of tiles).
struct FusedLastRound {
  int64_t blocks = 0, slots = 0;
  bool split = false, split_over_rounds = false;
};
FusedLastRound prefill_fused_last_round(const FusedPlan& plan, int64_t M, int64_t N);

// "m16n64", ...; with k_slices > 1 "m16n64/k4"; with a tail split
// "w256n128/tail-k5"; the GEMV-shaped path "gemv16/slices12" (the route
// log's variant).
const char* prefill_fused_variant_name(const FusedPlan& plan);

// The first column of Y the tail's launch computes (a multiple of the
// shape's tile columns; N when the plan has no tail split).
int64_t prefill_fused_tail_begin(const FusedPlan& plan, int64_t N);

// Bytes of workspace the plan's parts take (0 for one slice and no tail), with room to
// align them to 16 bytes inside a scratch that is only 2-byte aligned.
std::size_t prefill_fused_workspace_bytes(int64_t M, int64_t N, const FusedPlan& plan);

}  // namespace nvfp4
