// gemv_tma: gemv_mma's sliced layout (gemv_mma_slices.cuh) with its
// weights streamed by the TMA (sm_90) into a block-wide ring that a
// producer warp keeps full, so the bytes in flight no longer depend on how
// many decoding warps an SM holds. Bench only (group tma), not a route: on
// the H100, at its best slot and slice counts, it took 0.93-0.98x the
// route's time on 5120 x 25600 (0.93-0.99x the sliced kernel's best), at
// other counts it was slower, the best counts moved between device calls,
// and the plan that would pick them is the H200's to measure (PERF.md,
// issue 16 item 7).
//
// Why: gemv_mma on 5120 x 25600 is latency-bound at 24 warps an SM (PERF.md,
// issue 16 item 7): each warp copies its own two stages with cp.async and
// waits for them itself, and a sixth (H200) to a third (H100) of its warp
// samples wait there. Here one
// thread copies a block's 8 tiles a stage at a time (codes: one box of 128
// rows x 128 bytes, the 128-byte swizzle; scales: one box of 128 rows x 16
// bytes), kStages stages ahead, each stage landing on its "full" mbarrier;
// the 8 decoding warps wait on it, run gemv_mma's own mma_step on their 16
// rows, and arrive on the stage's "empty" mbarrier, which the producer waits
// on before it copies into that slot again.
//
// Everything else is the sliced kernel's: the plan's slices of K (one block
// holds 8 tiles and one slice), A's slice pre-paired in shared memory, the
// fast and the contract paths (StepScales), the parts stored before the fast
// path's restore, then prefill_fused_sum. A warp sums its k in the same order
// as the sliced kernel's warp for the same tile, so both give the same bits
// for every input, exact or not (the tests hold them to that).
//
// Rows in the ring: the 128-byte swizzle puts chunk c of row r at chunk
// c ^ (r % 8) of its 128 bytes, so rows g and g + 1, which one quarter-warp
// reads at once in gemv_mma's lane order, would share banks. So fragment row
// g (lane g = lane / 4) reads box row (g / 2) + 4 (g % 2): the quarter-warp's
// two rows are then 4 apart and their chunks fall in opposite halves of the
// banks. The outputs follow the same map.
//
// Runs where the TMA's rules hold for both maps: K % 256 == 0 (a scale row
// a multiple of 16 bytes), codes and scales 16-byte aligned (takes_shape);
// run_gemv_tma throws elsewhere.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/backend.h"
#include "harness/kernel_ctx.h"
#include "harness/launch.h"
#include "harness/portable_math.h"
#include "harness/tensor_map.h"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"
#include "kernels/nvfp4_matmul/gemv_mma_slices.cuh"
#include "kernels/nvfp4_matmul/prefill_fused.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_sum.cuh"

namespace nvfp4 {

struct GemvMmaTmaParams : GemvMmaSlicesParams {
  nvh::TensorMap2d w_map, s_map;  // W's codes and scales, boxes of a block's 128 rows a stage
  std::array<nvh::TensorMap2d*, 2> tensor_maps() { return {&w_map, &s_map}; }
};

template <int kStagesArg, int kAheadArg = kStagesArg>
struct GemvMmaTmaOf : GemvMmaSlices {
  using Params = GemvMmaTmaParams;
  static constexpr int kStages = kStagesArg;  // ring slots, each a stage of the block's 8 tiles
  // Stages copied before the decoding warps pre-pair A's slice (the rest of
  // the first kStages after it): all of them as a rule; fewer leaves A's
  // loads a shorter queue at the start, where every block of the wave
  // copies at once (the bench times 1; PERF.md).
  static constexpr int kAhead = kAheadArg;
  static_assert(kAhead >= 0 && kAhead <= kStages, "stages ahead of A: 0 to kStages");
  static constexpr uint32_t kConsumerWarps = kWarps;  // 8 decoding warps, one tile each
  static constexpr uint32_t kConsumerThreads = 32 * kConsumerWarps;
  static constexpr uint32_t kMaxBlockThreads = kConsumerThreads + 32;  // and the producer warp
  static constexpr int kMinBlocksPerSM = 2;
  static constexpr uint32_t kBoxRows = 16 * kConsumerWarps;               // 128
  static constexpr uint32_t kCodeBoxBytes = kBoxRows * kRowBytes;         // 16 KB
  static constexpr uint32_t kScaleBoxBytes = kBoxRows * kScaleRowBytes;   // 2 KB
  static constexpr uint32_t kSlotBytes = kCodeBoxBytes + kScaleBoxBytes;  // 18 KB, 1024-aligned
  static_assert(kSlotBytes % 1024 == 0, "every slot on the 128-byte swizzle's atom");

  // Whether the maps can be made: K % 256 == 0 and both pointers 16-byte aligned.
  NVH_HD static bool takes_shape(const GemvOperands& p) {
    return p.K % kStageK == 0 && reinterpret_cast<uintptr_t>(p.scales) % 16 == 0 &&
           reinterpret_cast<uintptr_t>(p.packed) % 16 == 0;
  }

  static nvh::TensorMap2d w_map(const GemvOperands& p) {
    return nvh::make_tensor_map_2d(p.packed, 1, static_cast<uint64_t>(p.N),
                                   static_cast<uint64_t>(p.K / 2), static_cast<uint64_t>(p.K / 2),
                                   kBoxRows, kRowBytes, nvh::TmaSwizzle::b128);
  }
  static nvh::TensorMap2d s_map(const GemvOperands& p) {
    return nvh::make_tensor_map_2d(p.scales, 1, static_cast<uint64_t>(p.N),
                                   static_cast<uint64_t>(p.K / 16), static_cast<uint64_t>(p.K / 16),
                                   kBoxRows, kScaleRowBytes, nvh::TmaSwizzle::none);
  }
  static Params with_maps(const GemvMmaSlicesParams& p) {
    Params w;
    static_cast<GemvMmaSlicesParams&>(w) = p;
    w.w_map = w_map(p);
    w.s_map = s_map(p);
    return w;
  }

  // The ring (1024 bytes to align it), its 2 kStages mbarriers, A's slice.
  NVH_HD static uint32_t ring_bytes() { return 1024 + kStages * kSlotBytes + 16 * kStages; }
  static nvh::LaunchShape shape(const GemvMmaSlicesParams& p) {
    nvh::LaunchShape s = GemvMmaSlices::shape(p);
    s.block = {kMaxBlockThreads, 1, 1};
    s.shared_bytes = ring_bytes() + static_cast<uint32_t>(p.M * slice_row_bytes(p.K, p.slices));
    return s;
  }

  // The box row fragment row g of a warp's tile reads (header comment).
  NVH_HD static uint32_t box_row(uint32_t warp, int g) {
    return 16 * warp + static_cast<uint32_t>(g / 2 + 4 * (g % 2));
  }
  // Box row r's share of step w for lane t, as GemvMma::row_from_stage
  // reads a stage: chunk 4w + t of its codes (where the swizzle put it) and
  // the scales of its two blocks.
  NVH_HD static RowStep row_from_slot(const uint8_t* slot, uint32_t r, int w, int t) {
    const uint32_t chunk = static_cast<uint32_t>(4 * w + t) ^ (r % 8);
    const nvh::U32x4 v = nvh::load_generic_u32x4(slot + r * kRowBytes + 16 * chunk);
    const uint16_t scales =
        nvh::load_generic_u16(slot + kCodeBoxBytes + r * kScaleRowBytes + 8 * w + 2 * t);
    return RowStep{{v.x, v.y, v.z, v.w}, scales};
  }

  struct Ring {
    uint8_t* slots;
    uint64_t* full;   // kStages: a slot's boxes have landed (the producer arrives, expecting them)
    uint64_t* empty;  // kStages: every decoding thread is done with the slot
  };
  NVH_HD static uint8_t* slot(const Ring& r, int i) { return r.slots + i * kSlotBytes; }

  // Stage `i` of the block's slice (its k0 = (first + i) * 256) into slot i % kStages.
  template <class Ctx>
  NVH_HD static void copy_stage(Ctx& ctx, const Params& p, const Ring& r, int64_t n0, int64_t first,
                                int i) {
    const int s = i % kStages;
    ctx.mbarrier_arrive_expect_tx(r.full + s, kSlotBytes);
    ctx.tma_load_2d_streaming(slot(r, s), p.w_map, static_cast<int32_t>((first + i) * kRowBytes),
                              static_cast<int32_t>(n0), r.full + s);
    ctx.tma_load_2d_streaming(slot(r, s) + kCodeBoxBytes, p.s_map,
                              static_cast<int32_t>((first + i) * kScaleRowBytes),
                              static_cast<int32_t>(n0), r.full + s);
  }

  // The producer's stages from `from` on: the first kStages into empty
  // slots, each later one into the slot the decoding warps freed kStages
  // stages before.
  template <class Ctx>
  NVH_HD static void produce(Ctx& ctx, const Params& p, const Ring& r, int64_t n0, int64_t first,
                             int from, int count) {
    for (int i = from; i < count; ++i) {
      if (i >= kStages) {
        ctx.mbarrier_wait(r.empty + i % kStages, static_cast<uint32_t>(i / kStages - 1) & 1u);
      }
      copy_stage(ctx, p, r, n0, first, i);
    }
  }

  // A decoding warp's stages: gemv_mma's mma_step on its rows of each slot,
  // in the sliced kernel's order.
  template <nvh::HalfKind kKind, bool kContract, class Ctx>
  NVH_HD static void consume(Ctx& ctx, const Ring& r, uint32_t lo, const uint8_t* act, int count,
                             float gs, float d[4]) {
    const int t = static_cast<int>(ctx.lane() % 4);
    for (int i = 0; i < count; ++i) {
      const int s = i % kStages;
      ctx.mbarrier_wait(r.full + s, static_cast<uint32_t>(i / kStages) & 1u);
      for (int w = 0; w < 2; ++w) {
        mma_step<kKind, true, kContract>(ctx, row_from_slot(slot(r, s), lo, w, t),
                                         row_from_slot(slot(r, s), lo + 8, w, t), act, gs, d);
        act += 2 * kStepK;  // 256 bytes a step of the pre-paired copy
      }
      ctx.mbarrier_arrive(r.empty + s);
    }
  }

  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void run(Ctx& ctx, const Params& p) {
    const int64_t group = ctx.block_idx().x / p.slices;
    const uint32_t slice = ctx.block_idx().x % p.slices;
    const int64_t stages = stage_count(p.K);
    const int64_t first = slice_start(stages, p.slices, slice),
                  end = slice_start(stages, p.slices, slice + 1);
    const int count = static_cast<int>(end - first);  // >= 1 (slices_for)
    const int64_t n0 = group * kBoxRows;
    const uint32_t tid = ctx.thread_idx().x, warp = ctx.warp();
    const bool producer = warp == kConsumerWarps;
    // Aligned by an offset from the shared array, as prefill_fused_wgmma does.
    uint8_t* smem = ctx.template shared_mem<uint8_t>();
    const auto misalign = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(smem) % 1024);
    uint8_t* slots = smem + (1024 - misalign) % 1024;
    uint64_t* bars = reinterpret_cast<uint64_t*>(slots + kStages * kSlotBytes);
    const Ring ring{slots, bars, bars + kStages};
    uint8_t* prepaired = reinterpret_cast<uint8_t*>(bars + 2 * kStages);
    const int64_t row_bytes = slice_row_bytes(p.K, p.slices);
    if (tid == 0) {
      for (int i = 0; i < kStages; ++i) {
        ctx.mbarrier_init(ring.full + i, 1);                  // the producer arrives
        ctx.mbarrier_init(ring.empty + i, kConsumerThreads);  // every decoding thread
      }
    }
    ctx.sync_threads();  // the inits, before any thread uses a barrier
    // The first kAhead stages are on their way while the decoding warps pre-pair A's slice.
    const int ahead = kAhead < count ? kAhead : count;
    if (producer && ctx.lane() == 0) produce(ctx, p, ring, n0, first, 0, ahead);
    if (!producer) prepair_slice(ctx, p, first * kStageK, end * kStageK, row_bytes, prepaired);
    ctx.sync_threads();  // A's slice, before any warp reads it
    if (producer) {
      if (ctx.lane() == 0) produce(ctx, p, ring, n0, first, ahead, count);
    } else {
      const uint32_t lane = ctx.lane();
      const int g = static_cast<int>(lane / 4), t = static_cast<int>(lane % 4);
      const uint32_t lo = box_row(warp, g);
      // Lanes past M read row M - 1 into outputs that are not stored (gemv_mma.cuh).
      const int64_t act_row = g < p.M ? g : p.M - 1;
      const uint8_t* act = prepaired + act_row * row_bytes + 16 * t;
      float d[4] = {0.f, 0.f, 0.f, 0.f};  // +0: the contract's sums start there
      // Every warp runs the ring, rows past N too (the TMA fills them with
      // zeros): the producer counts on every decoding thread's arrival.
      const float gs = nvh::load_generic_f32(p.global_scale);
      if (fast_g<kKind>(gs)) {
        consume<kKind, false>(ctx, ring, lo, act, count, 0.0f, d);
      } else {
        consume<kKind, true>(ctx, ring, lo, act, count, gs, d);
      }
      for (int i = 0; i < 4; ++i) {
        const int64_t n = n0 + lo + (i >= 2 ? 8 : 0), m = 2 * t + (i % 2);
        if (n >= p.N || m >= p.M) continue;
        nvh::store_f32(p.parts + (slice * p.M + m) * p.N + n, d[i]);
      }
    }
    ctx.launch_dependents();  // the sum, launched to overlap this grid's tail, may start
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    if (p.kind == nvh::HalfKind::fp16) {
      run<nvh::HalfKind::fp16>(ctx, p);
    } else {
      run<nvh::HalfKind::bf16>(ctx, p);
    }
  }
};

using GemvMmaTma = GemvMmaTmaOf<4>;

// Host code only: in a CUDA translation unit (bench_kernels.cu, which
// instantiates the kernels) its launch would instantiate the host
// executor's path there, whose kernel bodies nvcc then warns about.
#if !defined(__CUDACC__)
template <class Kernel>
void launch_gemv_tma(nvh::Backend& backend, const GemvMmaSlicesParams& sliced) {
  nvh::launch<Kernel>(backend, Kernel::shape(sliced), Kernel::with_maps(sliced));
}

// The TMA kernel with a ring of `stages` slots (3 or 4), `ahead` of them
// copied before A's slice is pre-paired (1, or -1 for all), over `slices` slices
// of K (M <= 8), its parts in the backend's workspace, then their sum in
// slice order, as run_gemv_slices runs the sliced kernel. Needs sm_90's TMA
// (Caps::wgmma). Throws std::invalid_argument naming the value it cannot take.
inline void run_gemv_tma(nvh::Backend& backend, const GemvOperands& operands, uint32_t slices,
                         int stages, int ahead = -1) {
  if (operands.M < 1 || operands.M > GemvMmaTma::kMaxM) {
    throw std::invalid_argument("run_gemv_tma: M = " + std::to_string(operands.M) +
                                ": the sliced GEMV takes 1 to 8 rows");
  }
  if (!GemvMmaTma::takes_shape(operands)) {
    throw std::invalid_argument("run_gemv_tma: K = " + std::to_string(operands.K) +
                                " with codes and scales at 16-byte offsets " +
                                std::to_string(reinterpret_cast<uintptr_t>(operands.packed) % 16) +
                                " / " +
                                std::to_string(reinterpret_cast<uintptr_t>(operands.scales) % 16) +
                                ": the TMA's maps need K % 256 == 0 and both 16-byte aligned");
  }
  if (slices < 1 || slices > GemvMma::stage_count(operands.K) ||
      !GemvMmaTma::slice_fits(operands.M, operands.K, slices)) {
    throw std::invalid_argument("run_gemv_tma: slices = " + std::to_string(slices) +
                                ": each slice needs a stage and its slice of A in shared memory");
  }
  GemvMmaSlicesParams sliced;
  static_cast<GemvOperands&>(sliced) = operands;
  sliced.split = 1;
  sliced.slices = slices;
  sliced.parts = static_cast<float*>(backend.workspace(GemvMmaTma::parts_bytes(sliced)));
  if (stages != 3 && stages != 4) {
    throw std::invalid_argument("run_gemv_tma: stages = " + std::to_string(stages) +
                                ": 3 or 4 (the kernels instantiated)");
  }
  if (ahead != -1 && ahead != 1 && ahead != stages) {
    throw std::invalid_argument("run_gemv_tma: ahead = " + std::to_string(ahead) +
                                ": 1 or the ring's slots (the kernels instantiated)");
  }
  const bool one_ahead = ahead == 1;
  if (stages == 3) {
    one_ahead ? launch_gemv_tma<GemvMmaTmaOf<3, 1>>(backend, sliced)
              : launch_gemv_tma<GemvMmaTmaOf<3>>(backend, sliced);
  } else {
    one_ahead ? launch_gemv_tma<GemvMmaTmaOf<4, 1>>(backend, sliced)
              : launch_gemv_tma<GemvMmaTmaOf<4>>(backend, sliced);
  }
  const PrefillFusedParams sum = whole_columns(sliced, sliced.parts, static_cast<int32_t>(slices));
  nvh::launch<PrefillFusedSum>(backend, PrefillFusedSum::shape(sum), sum);
}
#endif  // !defined(__CUDACC__)

}  // namespace nvfp4
