#include "kernels/nvfp4_matmul/prefill_fused_plan.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <set>
#include <string>

#include "kernels/nvfp4_matmul/gemv_mma_slices.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_shapes.cuh"

namespace nvfp4 {
namespace {

static_assert(PrefillFusedWgmmaTiles<2>::adds_in_a_cluster(kFusedMaxClusterSlices) &&
                  PrefillFusedWgmmaTiles<2>::adds_in_a_cluster(kFusedTailClusterSlices),
              "the plan's cluster splits are ones the kernel adds");

// What the plan needs of a shape: its block's rows of A and W, and how many
// of its blocks an SM holds (kMinBlocksPerSM: by shared memory, registers
// capped to match).
struct ShapeFacts {
  int64_t rows, cols, blocks_per_sm;
};

ShapeFacts facts(FusedShape s) {
  return with_fused_shape(s, [](auto tag) {
    using F = typename decltype(tag)::type;
    return ShapeFacts{F::kTileRows, F::kTileCols, F::kMinBlocksPerSM};
  });
}

// With wgmma, w128n128 for 64 < M <= 128 (on the H200 it beat m64n128 at M
// = 128 on all three msweep shapes) and w256n128 above (each at its best
// split, it tied w128n128 at 4096 x 4096, M = 256 and 512, and beat it by
// 10 to 23 % at M = 256 to 1024 everywhere else; PERF.md).
FusedShape shape_for(int64_t M, bool wgmma) {
  return M <= 16    ? FusedShape::m16n64
         : M <= 32  ? FusedShape::m32n128
         : M <= 64  ? FusedShape::m64n128
         : wgmma    ? (M <= 128 ? FusedShape::w128n128 : FusedShape::w256n128)
         : M <= 128 ? FusedShape::m64n128
                    : FusedShape::m128n128;
}

// The shape's blocks over M and N (grid.y capped at 65535: a grid-stride
// loop past it), and the block slots of the plan's multiprocessors.
int64_t blocks_over_m_and_n(const ShapeFacts& f, int64_t M, int64_t N) {
  const int64_t m_blocks = (M + f.rows - 1) / f.rows;
  return (N + f.cols - 1) / f.cols * (m_blocks < 65535 ? m_blocks : 65535);
}
int64_t block_slots(const ShapeFacts& f) { return kFusedPlanMultiprocessors * f.blocks_per_sm; }

// K's 128-value steps: the most slices any plan of K can have (a slice
// holds a step at least).
int64_t steps_of(int64_t K) { return K / 128; }

// The most slices of K a split may take: a slice holds a step at least,
// the parts fit in half the scratch, at most kFusedMaxKSlices.
int64_t most_slices(int64_t M, int64_t K) {
  int64_t most = steps_of(K);
  if (most > K / (4 * M)) most = K / (4 * M);
  return most < kFusedMaxKSlices ? most : kFusedMaxKSlices;
}

// A model of the time S slices take, in bytes moved at one rate: the
// weights and the A each block over N reads, spread over the waves the
// blocks take (a wave is as long as one block's share, 1 / S of it), plus
// the parts written and read back once, at `parts_weight` of that rate.
double split_cost(int64_t M, int64_t N, int64_t K, const ShapeFacts& f, int64_t blocks,
                  int64_t slots, int64_t slices, double parts_weight) {
  const double n_blocks = static_cast<double>((N + f.cols - 1) / f.cols);
  const double streamed = 0.5625 * static_cast<double>(N) * static_cast<double>(K) +
                          2.0 * static_cast<double>(M) * static_cast<double>(K) * n_blocks;
  const int64_t waves = (blocks * slices + slots - 1) / slots;
  const double parts = slices > 1 ? parts_weight * 8.0 * static_cast<double>(slices * M * N) : 0.0;
  return streamed * static_cast<double>(waves) / static_cast<double>(slices) + parts;
}

// The tiles over N past the last whole round of `slots` (one block over M,
// a wgmma shape) split along K where the model says it pays: a round of
// whole tiles costs slots * tile_bytes (the weights and the A one block
// reads), a tail split S ways 1 / S of that, plus its parts written and
// read back at the wgmma shapes' half weight. S is capped so that the
// tail's blocks fit one round, by the split's own limits and the number
// of tiles past the round.
FusedPlan with_tail(int64_t M, int64_t K, FusedShape shape, const ShapeFacts& f, int64_t n_tiles,
                    int64_t slots) {
  const int64_t tail = n_tiles % slots, rounds = n_tiles / slots;
  if (tail == 0) return {shape, 1};
  const int64_t most = std::min(slots / tail, most_slices(M, K));
  const double tile_bytes = 0.5625 * static_cast<double>(f.cols) * static_cast<double>(K) +
                            2.0 * static_cast<double>(M) * static_cast<double>(K);
  const auto cost = [&](int64_t s) {
    const double parts = s > 1 ? 0.5 * 8.0 * static_cast<double>(s * M * tail * f.cols) : 0.0;
    return (static_cast<double>(rounds) + 1.0 / static_cast<double>(s)) *
               static_cast<double>(slots) * tile_bytes +
           parts;
  };
  int64_t best = 1;
  for (int64_t s = 2; s <= most; ++s) {
    if (cost(s) < cost(best)) best = s;
  }
  if (best == 1) return {shape, 1};
  FusedPlan plan{shape, 1, 1, tail, static_cast<int32_t>(best)};
  if (shape == FusedShape::w256n128 && best >= kFusedTailClusterSlices &&
      tail <= kFusedClustersOfFour) {
    plan.tail_k_slices = kFusedTailClusterSlices;
    plan.tail_cluster_sum = true;
  }
  return plan;
}

}  // namespace

FusedPlan prefill_fused_plan(int64_t M, int64_t N, int64_t K, bool wgmma) {
  const FusedShape shape = shape_for(M, wgmma);
  if (M <= 0 || N <= 0 || K < 128) return {shape, 1};  // described, never run (the route's needs)
  const uint32_t gemv_slices = GemvMmaSlices16::slices_for(M, N, K);
  if (gemv_slices > 1) return {shape, 1, gemv_slices};
  const ShapeFacts f = facts(shape);
  const int64_t blocks = blocks_over_m_and_n(f, M, N), slots = block_slots(f);
  if (blocks >= slots) {
    return is_wgmma_shape(shape) && M <= f.rows ? with_tail(M, K, shape, f, blocks, slots)
                                                : FusedPlan{shape, 1};
  }
  // A wgmma shape whose blocks already fill kFusedNoSplitFillPercent of the
  // slots takes K whole: the model's split costs more than it says there.
  if (is_wgmma_shape(shape) && blocks * 100 >= kFusedNoSplitFillPercent * slots) {
    return {shape, 1};
  }
  const int64_t most = most_slices(M, K);
  // The wgmma kernel's parts cost half what the model says of the mma.sync
  // shapes'. On the H200 (PERF.md, "prefill_fused with wgmma": the calls of
  // 08:49 and 08:55 UTC 2026-12-02), at full weight the model chose k3 for 4096 x 4096 at M =
  // 128, which took 27.8 us where k4 took 23.3; at half weight it chooses
  // the fastest split timed (k1, k2, k4, k8 as the parts fit) on all three
  // msweep shapes at M = 128, 256 and 512. "The most slices in one wave"
  // fits those too, but took the replay's down_proj (5120 x 18432, M = 256,
  // 80 blocks) from k3 to k1 and from 233.8 to 326.1 ms.
  const double parts_weight = is_wgmma_shape(shape) ? 0.5 : 1.0;
  int32_t best = 1;
  for (int32_t s = 2; s <= most; ++s) {
    if (split_cost(M, N, K, f, blocks, slots, s, parts_weight) <
        split_cost(M, N, K, f, blocks, slots, best, parts_weight)) {
      best = s;
    }
  }
  FusedPlan plan{shape, best};
  plan.cluster_sum = shape == FusedShape::w256n128 && best == kFusedMaxClusterSlices;
  return plan;
}

bool prefill_fused_tail_overlaps(const FusedPlan& plan) {
  return plan.shape == FusedShape::w256n128 && plan.tail_tiles > 0 && plan.k_slices == 1 &&
         plan.tail_cluster_sum;
}

FusedRounds prefill_fused_rounds(const FusedPlan& plan, int64_t M, int64_t N, int64_t K) {
  if (plan.gemv_slices > 1 || M <= 0 || N <= 0 || K <= 0) return {};
  const ShapeFacts f = facts(plan.shape);
  FusedRounds r;
  r.slots = block_slots(f);
  r.k_per_slice = K / plan.k_slices;
  const auto rounds_of = [&](int64_t blocks) { return (blocks + r.slots - 1) / r.slots; };
  const int64_t blocks = blocks_over_m_and_n(f, M, N);
  if (plan.tail_tiles > 0) {  // one block over M: the tiles before the tail, then its split
    const int64_t before = (blocks - plan.tail_tiles) * plan.k_slices;
    const int64_t tail = plan.tail_tiles * plan.tail_k_slices;
    r.blocks = before + tail;
    // A tail that overlaps the launch before it shares that launch's last round.
    r.rounds = prefill_fused_tail_overlaps(plan) ? rounds_of(r.blocks)
                                                 : rounds_of(before) + rounds_of(tail);
  } else {
    r.blocks = blocks * plan.k_slices;
    r.rounds = rounds_of(r.blocks);
  }
  return r;
}

bool prefill_fused_fills_its_rounds(const FusedPlan& plan, int64_t M, int64_t N, int64_t K,
                                    int64_t fill_percent) {
  const FusedRounds r = prefill_fused_rounds(plan, M, N, K);
  return r.rounds > 0 && 100 * r.blocks >= fill_percent * r.rounds * r.slots &&
         r.k_per_slice >= kFusedMinKPerSlice;
}

const char* prefill_fused_variant_name(const FusedPlan& plan) {
  if (plan.gemv_slices > 1) return GemvMmaSlices16::variant_name(plan.gemv_slices);
  static const char* const kShapes[] = {"m16n64",   "m32n128",  "m64n128",
                                        "m128n128", "w128n128", "w256n128"};
  const auto name_of = [](const FusedPlan& p) {
    std::string name = kShapes[static_cast<std::size_t>(p.shape)];
    if (p.k_slices > 1) name += "/k" + std::to_string(p.k_slices);
    if (p.cluster_sum) name += "-cluster";
    if (p.tail_tiles > 0) name += "/tail-k" + std::to_string(p.tail_k_slices);
    if (p.tail_cluster_sum) name += "-cluster";
    return name;
  };
  // The plans' kinds by table (the dispatcher asks on every call): [shape][k]
  // [0] k slices, [1] k slices meeting in clusters, [2] one slice and a tail
  // in k, [3] that tail's k meeting in clusters.
  static const auto kNames = [&] {
    std::array<std::array<std::array<std::string, 4>, kFusedMaxKSlices + 1>, 6> n;
    for (std::size_t s = 0; s < n.size(); ++s) {
      for (int32_t k = 1; k <= kFusedMaxKSlices; ++k) {
        const auto shape = static_cast<FusedShape>(s);
        n[s][k][0] = name_of({shape, k});
        n[s][k][1] = name_of({shape, k, 1, 0, 1, true});
        n[s][k][2] = name_of({shape, 1, 1, 1, k});
        n[s][k][3] = name_of({shape, 1, 1, 1, k, false, true});
      }
    }
    return n;
  }();
  const bool tail = plan.tail_tiles > 0;
  const int32_t k = tail ? plan.tail_k_slices : plan.k_slices;
  // The plans' own kinds: k slices without a tail, or one slice and a tail in k.
  const bool plans_kind = tail ? plan.k_slices == 1 && !plan.cluster_sum : !plan.tail_cluster_sum;
  if (plans_kind && k >= 1 && k <= kFusedMaxKSlices) {
    const bool cluster = tail ? plan.tail_cluster_sum : plan.cluster_sum;
    return kNames[static_cast<std::size_t>(plan.shape)][static_cast<std::size_t>(k)]
                 [(tail ? 2u : 0u) + (cluster ? 1u : 0u)]
                     .c_str();
  }
  // A hand plan of another kind (tests, the bench): interned, since the route
  // log keeps the pointer (a set's nodes never move).
  static std::mutex mutex;
  static std::set<std::string> names;
  const std::lock_guard<std::mutex> lock(mutex);
  return names.insert(name_of(plan)).first->c_str();
}

std::string prefill_fused_plan_fault(const FusedPlan& plan, int64_t N, int64_t K) {
  if (plan.gemv_slices < 1) return "gemv_slices = 0 (1: the tiles; more: the GEMV-shaped kernel)";
  if (plan.gemv_slices > 1) return "";
  const int64_t steps = steps_of(K);
  const auto slices_fault = [&](const char* name, int64_t slices) -> std::string {
    if (slices >= 1 && slices <= steps) return "";
    return std::string(name) + " = " + std::to_string(slices) + ", outside 1.." +
           std::to_string(steps) + " (a slice holds a 128-value step of K at least)";
  };
  if (std::string fault = slices_fault("k_slices", plan.k_slices); !fault.empty()) return fault;
  const int64_t cols = facts(plan.shape).cols, tiles = (N + cols - 1) / cols;
  if (plan.tail_tiles < 0 || plan.tail_tiles >= tiles) {
    return "tail_tiles = " + std::to_string(plan.tail_tiles) + ", outside 0.." +
           std::to_string(tiles - 1) + " (fewer than N's " + std::to_string(tiles) + " tiles of " +
           std::to_string(cols) + " columns)";
  }
  return plan.tail_tiles > 0 ? slices_fault("tail_k_slices", plan.tail_k_slices) : "";
}

int64_t prefill_fused_tail_begin(const FusedPlan& plan, int64_t N) {
  if (plan.tail_tiles == 0) return N;
  const int64_t cols = facts(plan.shape).cols;
  return ((N + cols - 1) / cols - plan.tail_tiles) * cols;
}

std::size_t prefill_fused_workspace_bytes(int64_t M, int64_t N, const FusedPlan& plan) {
  if (plan.tail_tiles > 0) {
    if (plan.tail_cluster_sum) return 0;
    const int64_t tail_cols = N - prefill_fused_tail_begin(plan, N);
    return static_cast<std::size_t>(plan.tail_k_slices * M * tail_cols) * sizeof(float) + 16;
  }
  if (plan.k_slices == 1 || plan.cluster_sum) return 0;
  return static_cast<std::size_t>(plan.k_slices * M * N) * sizeof(float) + 16;
}

}  // namespace nvfp4
