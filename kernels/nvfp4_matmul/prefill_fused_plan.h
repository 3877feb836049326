// How prefill_fused runs a problem: which block shape (prefill_fused.cuh)
// and how many slices of K across blocks. A function of M, N, K and whether
// the device has wgmma (Caps::wgmma), never of its speed or size: the host
// executor, which has wgmma (emulated), plans as an H200 does, adds the same
// parts in the same order and computes the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

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
  // w256n128's K slices meet in a cluster: the blocks of a tile add their
  // sums in the cluster's shared memory and write Y (prefill_fused_wgmma.cuh,
  // cluster_sum); no parts, no prefill_fused_sum. Two slices over every tile
  // (k_slices, kFusedMaxClusterSlices): 0.89 to 0.97x the two kernels on an
  // H100 where the plans take it (w128n128's split: 0.94 to 1.04x, not
  // taken; PERF.md, 2026-12-06).
  bool cluster_sum = false;
  // The tail's slices meet in clusters (w256n128's tail split the model puts
  // in four slices or more: four in clusters of four, where the H200 holds
  // the tail's clusters at once, kFusedClustersOfFour).
  bool tail_cluster_sum = false;
};

// Whether the plan's tail launch overlaps the launch before it (w256n128's
// clustered tail: it touches none of the columns that launch writes,
// FusedOverlap; PERF.md, 2026-12-06).
bool prefill_fused_tail_overlaps(const FusedPlan& plan);

// The multiprocessors the split fills: the H200's, where the shapes were
// timed (PERF.md). A fixed number, not the device's: see above.
inline constexpr int64_t kFusedPlanMultiprocessors = 132;
inline constexpr int32_t kFusedMaxKSlices = 8;
// The most slices a cluster adds (FusedPlan::cluster_sum). At the wgmma
// kernel's 225 KB of shared memory a block, the H200 holds 66 clusters of
// 2 (all 132 SMs) but 39 of 3, 30 of 4, 22 of 5 (cudaOccupancyMaxActiveClusters,
// 2026-12-04), fewer than the plans' tiles ask for (40 of 3 on 5120 x 6144):
// those would run in two waves (89.7 us there against 41.0).
inline constexpr int32_t kFusedMaxClusterSlices = 2;
// A tail split's clusters of four (FusedPlan::tail_cluster_sum): at most
// this many, the H200's count above, so that they run at once.
inline constexpr int32_t kFusedTailClusterSlices = 4;
inline constexpr int64_t kFusedClustersOfFour = 30;

// The shape by M (the smallest that holds M's rows, 128 rows a block above
// 64; with wgmma, w128n128 up to M = 128 and w256n128 above, which measured faster than the
// mma.sync shapes on the H200, PERF.md); then, when the shape's blocks over
// M and N leave some of the plan's multiprocessors without a block, the slices of K (1..8) that
// move the fewest bytes per wave-filled time (prefill_fused_plan.cc, split_cost), the fewest on a
// tie (the wgmma shapes' parts at half weight). A slice holds at least one 128-k step, and the
// parts fit in half the operator's [N, K] scratch (k_slices * 4 * M <= K). With wgmma and
// more tiles over N than multiprocessors (one block over M), the tiles past the last whole
// round may take a split of their own (tail_tiles; same model, same limits).
// A wgmma shape whose blocks over M and N fill kFusedNoSplitFillPercent of
// the slots or more takes K in one slice, whatever the model says: on the
// H200 (2026-12-04, the call after 16:55 UTC, results/h200-plan-splits.json)
// the model split 12288 x 4096's 96 blocks (73 %) in 4 at M = 96 to 256,
// 48.6 to 83.2 us where one slice took 41.4 to 59.6 (0.72 to 0.85x), and
// 11008 x 4096's 86 (65 %) at M = 128 and 256 (43.8 against 41.8, 65.9
// against 59.1); at 80 blocks (61 %, 10240 x 4096) its splits and one slice
// were within 3 % but at M = 256 (63.8 against 59.8), and at 64 (48 %) its
// splits won by up to 25 % (8192 x 4096, M = 128: 30.5 against 40.6).
inline constexpr int64_t kFusedNoSplitFillPercent = 65;
FusedPlan prefill_fused_plan(int64_t M, int64_t N, int64_t K, bool wgmma);

// How the plan's blocks fill their rounds of block slots
// (kFusedPlanMultiprocessors times the shape's blocks an SM): every
// launch's blocks (over M, over N, and over the K slices; a tail split's
// two launches each take their own rounds), the rounds they take, and the
// K values of one slice of the first launch. All zero for the GEMV-shaped
// path (no rounds of tiles).
struct FusedRounds {
  int64_t blocks = 0, slots = 0, rounds = 0, k_per_slice = 0;
};
FusedRounds prefill_fused_rounds(const FusedPlan& plan, int64_t M, int64_t N, int64_t K);

// Whether the plan's blocks fill their rounds to kFusedRoundFillPercent or
// more (blocks / (rounds x slots)) in K slices of kFusedMinKPerSlice values
// or more: where the wgmma kernel with two blocks over M beat dequant + GEMM
// on the H200 (2026-12-03, the call after 21:19 UTC, PERF.md; M = 448 and
// 512 on 24 weight shapes): every plan so filling won (fills 82 % to 97 %,
// slices 4096 to 7168 values), every other lost or tied (fills 61 % to 75 %;
// at 91 to 97 % full, slices of 2048 lost and of 3072 tied). The
// dispatcher's crossover: dispatch.h.
inline constexpr int64_t kFusedRoundFillPercent = 80;
inline constexpr int64_t kFusedMinKPerSlice = 4096;
// With three and four whole blocks of 256 rows over M (M = 768 and 1024,
// dispatch.h's kFusedFullBlocksMinM..MaxM) the fill that decides is higher:
// on the H200 (2026-12-06, results/h200-crossover24-*.json; 24 weight shapes
// at M = 768 and 1024) every plan filling its rounds to 90 % or more in
// slices of 4096 or more beat dequant + GEMM (0.87 to 0.98), and at 80 to
// 89 % at M = 1024 five of six lost (up to 1.09; 7168 x 7168 won, 0.95).
inline constexpr int64_t kFusedFullBlocksFillPercent = 90;
bool prefill_fused_fills_its_rounds(const FusedPlan& plan, int64_t M, int64_t N, int64_t K,
                                    int64_t fill_percent = kFusedRoundFillPercent);

// "m16n64", ...; with k_slices > 1 "m16n64/k4"; with a tail split
// "w256n128/tail-k5"; slices that meet in a cluster "w256n128/k2-cluster",
// a tail's "w256n128/tail-k4-cluster";
// the GEMV-shaped path "gemv16/slices12" (the route log's variant).
const char* prefill_fused_variant_name(const FusedPlan& plan);

// Why the runner cannot carry out the plan on N x K, naming the field and
// its value ("" when it can): K slices outside 1..K / 128 (a slice holds a
// 128-value step at least), gemv_slices 0, a tail below 0 or of N's every
// tile. The planner's plans of shapes the route takes have none; hand plans (tests, the bench)
// may, and would launch grids of nonsense dimensions.
std::string prefill_fused_plan_fault(const FusedPlan& plan, int64_t N, int64_t K);

// The first column of Y the tail's launch computes (a multiple of the
// shape's tile columns; N when the plan has no tail split).
int64_t prefill_fused_tail_begin(const FusedPlan& plan, int64_t N);

// Bytes of workspace the plan's parts take (0 for one slice and no tail), with room to
// align them to 16 bytes inside a scratch that is only 2-byte aligned.
std::size_t prefill_fused_workspace_bytes(int64_t M, int64_t N, const FusedPlan& plan);

}  // namespace nvfp4
