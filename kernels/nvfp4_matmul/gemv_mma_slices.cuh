// gemv_mma_slices: gemv_mma's kernel for shapes with few tiles and a long K
// (5120 x 25600: 320 tiles of 16 rows, 100 stages of 256 k), where the
// route's layout (8 warps of a block splitting one tile's K, A read
// through the L1 because M x K does not fit in shared memory) leaves a
// fifth of the H200's block slots empty and re-reads A from the L1 in
// every warp (PERF.md, issue 16 item 7).
//
// Here a block holds 8 tiles, one warp each, as the route runs on the
// lm_head, and one contiguous slice of K: the grid is (tiles / 8) x slices
// blocks, the slices chosen by slices_for so that the grid fills whole
// waves of the plan's 132 multiprocessors. Each block pre-pairs only its
// slice of A in shared memory (activations_fit's layout over the slice, so
// A fits at any K), streams its stages with the route's own loop
// (GemvMma::stream: the fast and the contract paths, wide or 4-byte
// scales, a last half stage when K % 256 == 128), and stores its fp32 sums,
// before the fast path's restore, as part `slice` of a workspace
// [slices][M][N]. prefill_fused_sum then adds the parts in slice order,
// restores, adds the bias and rounds: a fixed order, so the bits do not
// depend on timing, and a function of M, N and K alone, so every backend
// adds the same parts.
//
// GemvMmaSlicesOf<2> is the same layout with two groups of 8 rows of A (M
// up to 16): each decoded fragment of W feeds one mma per group, in its
// own copy of the stage loop (stream_cols), so gemv_mma's loop is left as
// it was measured. prefill_fused's plan takes it for 8 < M <= kMaxFusedM.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"
#include "kernels/nvfp4_matmul/probes.h"

namespace nvfp4 {

// GemvMma's with split 1: each warp streams its tile's whole slice.
struct GemvMmaSlicesParams : GemvMma::Params {
  uint32_t slices;  // blocks along K for each 8 tiles
  float* parts;     // [slices][M][N]
};

// kCols groups of 8 rows of A (the mma's n): 1 for gemv_mma (M <= 8), 2 for
// prefill_fused's GEMV-shaped path (8 < M <= 16: each decoded fragment of W
// meets both groups; prefill_fused_plan.h).
template <int kCols>
struct GemvMmaSlicesOf : GemvMma {
  using Params = GemvMmaSlicesParams;
  static constexpr int kStages = kPrePairedStages;
  static constexpr int64_t kMaxM = 8 * kCols;
  // M up to which prefill_fused takes the two-group layout: on the H200
  // (run of 2026-12-02 06:04 UTC, results/h200-msweep-gemv16.json) 5-19 %
  // faster than its own kernel at M = 9 to 12 on 4096 x 14336 and
  // 14336 x 4096, even on 4096 x 4096 (PERF.md); at 14 and 16 it lost on
  // 4096 x 4096.
  static constexpr int64_t kMaxFusedM = 12;

  // The multiprocessors and blocks per multiprocessor the plan fills: the
  // H200's, where it was measured; a constant, not the device's, so that
  // the parts and their order are the same on every backend.
  static constexpr int64_t kPlanSlots = 132 * kMinBlocksPerSM;
  static constexpr int64_t kMaxSlices =
      2 * kPlanSlots;  // slices_for's most: two waves of one group
  // Every slice streams at least this many stages: shorter ones measured
  // slower (PERF.md).
  static constexpr int64_t kMinSliceStages = 4;
  // K's stages from which the sliced layout is taken: on the H200 it was
  // 1-16 % faster at 56 and 100 stages (4096 x 14336, 5120 x 25600; run of
  // 2026-12-02 05:42 UTC, results/h200-gemv-slices-depth.json), even at 32
  // on 2048 x 8192 and 5 % slower at 32 on 4096 x 8192, M = 1 (05:36 UTC,
  // results/h200-gemv-slices-experiments.csv; PERF.md).
  static constexpr int64_t kMinStagesToSlice = 48;
  // Warps the route's own layout aims to keep busy on the plan's GPU (the
  // H200's 132 multiprocessors x 32, gemv_mma_target_warps).
  static constexpr int64_t kPlanTargetWarps = 132 * 32;

  NVH_HD static int64_t groups(int64_t N) { return ((N + 15) / 16 + kWarps - 1) / kWarps; }
  // Stages [first, end) of slice `slice`: as even as the count allows.
  NVH_HD static int64_t slice_start(int64_t stages, int64_t slices, int64_t slice) {
    return stages * slice / slices;
  }
  NVH_HD static int64_t longest_slice(int64_t K, int64_t slices) {
    return (stage_count(K) + slices - 1) / slices;
  }
  NVH_HD static int64_t slice_row_bytes(int64_t K, int64_t slices) {
    return prepaired_row_bytes(longest_slice(K, slices) * kStageK);
  }
  NVH_HD static bool slice_fits(int64_t M, int64_t K, int64_t slices) {
    return M * slice_row_bytes(K, slices) <= kMaxPrePairedBytes;
  }

  // 1 (the route's own layout) unless K is long and the route's blocks
  // leave the plan's slots short of a wave; then the most slices that fill one wave
  // of blocks, else two, whose slice of A fits in shared memory and streams
  // kMinSliceStages stages at least (1 when none does).
  //
  // Two groups (prefill_fused, 8 < M <= kMaxFusedM): the same choice for
  // any N and K; 1 there means prefill_fused's own kernel.
  static uint32_t slices_for(int64_t M, int64_t N, int64_t K) {
    const int64_t tiles = (N + 15) / 16, stages = stage_count(K);
    if constexpr (kCols == 2) {
      if (M <= 8 || M > kMaxFusedM || K < kStageK) return 1;
    } else {
      if (M < 1 || M > 8 || K < kStageK || stages < kMinStagesToSlice) return 1;
      const int64_t split = split_for(N, K, kPlanTargetWarps);
      const int64_t route_blocks = (tiles + kWarps / split - 1) / (kWarps / split);
      if (route_blocks >= kPlanSlots) return 1;
    }
    for (int64_t waves = 1; waves <= 2; ++waves) {
      for (int64_t s = waves * kPlanSlots / groups(N); s >= 2; --s) {
        if (stages / s >= kMinSliceStages && slice_fits(M, K, s)) {
          return static_cast<uint32_t>(s);
        }
      }
    }
    return 1;
  }

  // The route log's variant for `slices` (1 to kMaxSlices): the layout's
  // name, "m16n8k16" (gemv_mma) or "gemv16" (prefill_fused's GEMV-shaped
  // path), then "/slices<S>" when sliced. Host code; the names live as long
  // as the program (the route log keeps the pointer).
  static const char* variant_name(uint32_t slices) {
    static const std::vector<std::string> names = [] {
      const std::string layout = kCols == 1 ? "m16n8k16" : "gemv16";
      std::vector<std::string> n(kMaxSlices + 1, layout);
      for (std::size_t s = 2; s < n.size(); ++s) n[s] = layout + "/slices" + std::to_string(s);
      return n;
    }();
    return names[slices].c_str();
  }

  static std::size_t parts_bytes(const Params& p) {
    return static_cast<std::size_t>(p.slices * p.M * p.N) * sizeof(float);
  }

  static nvh::LaunchShape shape(const Params& p) {
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>(groups(p.N) * p.slices), 1, 1};
    s.shared_bytes =
        pipeline_bytes(kStages) + static_cast<uint32_t>(p.M * slice_row_bytes(p.K, p.slices));
    s.uses_collectives = true;
    return s;
  }

  // A's columns [k0, k1) pre-paired as prepair_activations lays out a whole
  // row (k1 - k0 a multiple of 128), rows `row_bytes` apart.
  template <class Ctx>
  NVH_HD static void prepair_slice(Ctx& ctx, const Params& p, int64_t k0, int64_t k1,
                                   int64_t row_bytes, uint8_t* prepaired) {
    const int chunks = static_cast<int>((k1 - k0) / 8), rows = static_cast<int>(p.M);
    for (int j = static_cast<int>(ctx.thread_idx().x); NVFP4_PROBE(j < chunks);
         j += kMaxBlockThreads) {
      const int step = j / 16, t = (j / 4) % 4, q = j % 4;
      uint8_t* at = prepaired + 256 * step + 64 * q + 16 * t;
      for (int c = 0; c < kCols; ++c) {  // 8 rows at a time: their loads wait out one latency
        nvh::U32x4 v[8];
        for (int m = 0; m < 8; ++m) {
          if (8 * c + m < rows) v[m] = nvh::load_u32x4(p.A + (8 * c + m) * p.K + k0 + 8 * j);
        }
        for (int m = 0; m < 8; ++m) {
          if (8 * c + m >= rows) break;
          uint32_t pairs[4];
          pair_activations(v[m], pairs);
          nvh::store_u32x4(at + (8 * c + m) * row_bytes, {pairs[0], pairs[1], pairs[2], pairs[3]});
        }
      }
    }
  }

  // GemvMma::stream with a split of 1 for kCols groups of A's rows: each
  // decoded fragment of W feeds one mma per group, each group's in the
  // route's (q, h) order.
  template <nvh::HalfKind kKind, bool kWide, bool kContract, class Ctx>
  NVH_HD NVH_INLINE static void stream_cols(Ctx& ctx, const GemvMma::Params& p, const LoopShape& s,
                                            float tensor_scale, LoopState<kWide>& l,
                                            const uint8_t* act[kCols], float d[kCols][4]) {
    for (int stage = s.part, read = 0; NVFP4_PROBE(stage <= s.last);
         ++stage, read = following<kStages>(read)) {
      if (NVFP4_PROBE(l.next <= s.last)) {
        issue_stage(ctx, p, l.copy, slot(s, l.fill), !kWide && l.next == s.half_stage, s.lane);
      }
      ctx.cp_async_commit();
      ++l.next;
      l.fill = following<kStages>(l.fill);
      ctx.template cp_async_wait<kStages - 1>();  // this lane's copies of `stage` have landed
      ctx.sync_warp();                            // and so have the other lanes'
      for (int w = 0; w < 2; ++w) {
        if (NVFP4_PROBE(!kWide && w == 1 && stage == s.half_stage)) break;
        const RowStep lo = row_from_stage(slot(s, read), s.g, w, s.t),
                      hi = row_from_stage(slot(s, read), s.g + 8, w, s.t);
        const StepScales<kKind, kContract> scales_lo(lo.scales, tensor_scale),
            scales_hi(hi.scales, tensor_scale);
        for (int q = 0; q < 4; ++q) {
          uint32_t w_lo[4], w_hi[4];
          scales_lo.weights(lo, q, w_lo);
          scales_hi.weights(hi, q, w_hi);
          for (int c = 0; c < kCols; ++c) {
            uint32_t b_pairs[4];
            activation_pairs<true>(act[c] + w * 2 * kStepK, q, b_pairs);
            for (int h = 0; h < 2; ++h) {
              const uint32_t a[4] = {w_lo[2 * h], w_hi[2 * h], w_lo[2 * h + 1], w_hi[2 * h + 1]};
              const uint32_t b[2] = {b_pairs[2 * h], b_pairs[2 * h + 1]};
              ctx.mma_m16n8k16(d[c], a, b, d[c], kKind);
            }
          }
        }
      }
      for (int c = 0; c < kCols; ++c) act[c] += 2 * kStageK;
      ctx.sync_warp();  // every lane is done with this slot before the next issue refills it
    }
  }

  template <nvh::HalfKind kKind, bool kWide, class Ctx>
  NVH_HD static void run(Ctx& ctx, const Params& p) {
    const int64_t group = ctx.block_idx().x / p.slices;
    const uint32_t slice = ctx.block_idx().x % p.slices;
    const int64_t steps = p.K / kStepK, stages = stage_count(p.K);
    const int64_t first = slice_start(stages, p.slices, slice),
                  end = slice_start(stages, p.slices, slice + 1);
    const int64_t n0 = (group * kWarps + ctx.warp()) * 16;
    const uint32_t lane = ctx.lane();
    const int g = static_cast<int>(lane / 4), t = static_cast<int>(lane % 4);
    uint8_t* warp_stages = ctx.template shared_mem<uint8_t>() + ctx.warp() * kStages * kStageBytes;
    uint8_t* prepaired = ctx.template shared_mem<uint8_t>() + pipeline_bytes(kStages);
    const int64_t row_bytes = slice_row_bytes(p.K, p.slices);
    const bool has_work = n0 < p.N;  // every slice holds a stage (slices_for)
    const int last = static_cast<int>(end - 1);
    const GemvMma::Params& route = p;  // split 1: the route's loop moves a stage at a time
    const int half_stage = !kWide && steps % 2 == 1 ? static_cast<int>(stages - 1) : -1;
    const LoopShape shape{warp_stages, static_cast<int>(first), last, 1, half_stage, g, t, lane};
    LoopState<kWide> l{first_copy<kWide>(route, n0, first, lane),
                       nullptr,
                       static_cast<int>(first),
                       0,
                       {0.f, 0.f, 0.f, 0.f}};
    // The first stage is on its way while the block pre-pairs its slice of A.
    if (NVFP4_PROBE(has_work)) {
      issue_stage(ctx, route, l.copy, slot(shape, 0), !kWide && first == half_stage, lane);
    }
    ctx.cp_async_commit();
    l.next += 1;
    l.fill = 1;
    const int64_t k_end = end * kStageK < p.K ? end * kStageK : p.K;  // a half stage's end
    prepair_slice(ctx, p, first * kStageK, k_end, row_bytes, prepaired);
    ctx.sync_threads();
    if (NVFP4_PROBE(!has_work)) return;
    // Lanes past M read row M - 1 into outputs that are not stored (gemv_mma.cuh).
    const uint8_t* act[kCols];
    for (int c = 0; c < kCols; ++c) {
      const int64_t row = 8 * c + g < p.M ? 8 * c + g : p.M - 1;
      act[c] = prepaired + row * row_bytes + 16 * t;
    }
    float d[kCols][4] = {};  // +0: the contract's sums start there
    // weight_scale_2 after the prologue, as the route reads it (gemv_mma.cuh).
    const float tensor_scale = nvh::load_generic_f32(p.global_scale);
    if constexpr (kCols == 1) {
      l.act = act[0];
      if (NVFP4_PROBE(fast_g<kKind>(tensor_scale))) {
        stream<kKind, true, kWide, false, kStages>(ctx, route, shape, 0.0f, l);
      } else {
        stream<kKind, true, kWide, true, kStages>(ctx, route, shape, tensor_scale, l);
      }
      for (int i = 0; i < 4; ++i) d[0][i] = l.d[i];
    } else if (NVFP4_PROBE(fast_g<kKind>(tensor_scale))) {
      stream_cols<kKind, kWide, false>(ctx, route, shape, 0.0f, l, act, d);
    } else {
      stream_cols<kKind, kWide, true>(ctx, route, shape, tensor_scale, l, act, d);
    }
    for (int c = 0; c < kCols; ++c) {
      for (int i = 0; i < 4; ++i) {
        const int64_t n = n0 + g + (i >= 2 ? 8 : 0), m = 8 * c + 2 * t + (i % 2);
        if (NVFP4_PROBE(n >= p.N || m >= p.M)) continue;
        nvh::store_f32(p.parts + (slice * p.M + m) * p.N + n, d[c][i]);
      }
    }
  }

  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void run_scales(Ctx& ctx, const Params& p) {
    if (NVFP4_PROBE(wide_scales(p))) {
      run<kKind, true>(ctx, p);
    } else {
      run<kKind, false>(ctx, p);
    }
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    if (NVFP4_PROBE(p.kind == nvh::HalfKind::fp16)) {
      run_scales<nvh::HalfKind::fp16>(ctx, p);
    } else {
      run_scales<nvh::HalfKind::bf16>(ctx, p);
    }
    ctx.launch_dependents();  // the sum, launched to overlap this grid's tail, may start
  }
};

using GemvMmaSlices = GemvMmaSlicesOf<1>;    // gemv_mma's sliced layout
using GemvMmaSlices16 = GemvMmaSlicesOf<2>;  // prefill_fused's GEMV-shaped path

}  // namespace nvfp4
