// gemv_mma: the tensor-core decode GEMV for 0 < M <= 8, block_size == 16,
// K % 128 == 0 on sm >= 80, with mma.sync m16n8k16.
//
// The weights take the A slot (16 rows of W by 16 k) and the activations the
// B slot (16 k by 8 rows of A, so M <= 8 fits one mma). A warp owns one tile
// of 16 rows of W and a share of K in steps of 128: all of it when there are
// tiles enough to fill the GPU, else 2, 4 or 8 warps split K and meet in
// shared memory, adding their parts in a fixed order so the result does not
// depend on timing.
//
// The sum over k does not care which k sits in which fragment slot, as long as
// a weight and its activation sit in matching slots. So each lane loads 32
// consecutive codes of a row (one 16-byte load) and the activations of the
// same 32 k (16-byte loads), rather than the scattered bytes the PTX
// fragment layout would ask for: in mma j = 2q + h of a step, lane (g, t)
// puts physical k = 32t + 8q + 2h + {0, 4, 1, 5} where the layout has logical
// k = {2t, 2t+1, 2t+8, 2t+9}, for A and B alike. (Codes i and i + 4 of a
// word share a pair because the shift-and-mask decode places them with one
// shift; the activations are re-paired to match, one prmt per pair, shared
// by the lane's two rows.)
//
// A weight in the A slot is e2m1 * e4m3, exact in fp16 and bf16 (6
// significant bits), decoded to 16-bit pairs without table lookups
// (SpreadDecode: the kernel is bound by the integer pipe) and scaled with
// two HMUL2 per pair; weight_scale_2 multiplies the sum once, as in gemv_scalar.
//
// Weights and their scales stream in through shared memory with cp.async,
// kStages steps ahead, so many bytes are in flight per warp without holding
// registers; each lane copies exactly the bytes it later reads, so no barrier
// is needed. (The scales must then be 4-byte aligned: dispatch.cc asks it.)
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/fp4_codec.cuh"
#include "kernels/gemv_output.cuh"
#include "kernels/probes.h"

namespace nvfp4 {

struct GemvMma {
  static constexpr uint32_t kWarps = 8;
  static constexpr uint32_t kMaxBlockThreads = kWarps * 32;
  // Three blocks (24 warps) per multiprocessor: registers capped near 85.
  static constexpr int kMinBlocksPerSM = 3;
  static constexpr int64_t kStepK = 128;
  static constexpr int kStages = 4;
  // A lane's slot in a stage: 2 rows x 16 bytes of codes, then 2 rows x 4
  // bytes of scales, padded to keep the next lane's codes 16-byte aligned.
  static constexpr uint32_t kSlotBytes = 48;
  static constexpr uint32_t kStageBytes = 32 * kSlotBytes;
  static constexpr uint32_t kPipelineBytes = kWarps * kStages * kStageBytes;

  struct Params : GemvOperands {
    uint32_t split;  // warps sharing one tile's K: 1, 2, 4 or 8
  };

  // Warps per tile: as few as keep `target_warps` warps busy (K steps permitting).
  static uint32_t split_for(int64_t N, int64_t K, int64_t target_warps) {
    const int64_t tiles = (N + 15) / 16, steps = K / kStepK;
    uint32_t split = 1;
    while (split < kWarps && tiles * split < target_warps && steps >= 2 * split) split *= 2;
    return split;
  }

  static nvh::LaunchShape shape(const Params& p) {
    const int64_t tiles = (p.N + 15) / 16, tiles_per_block = kWarps / p.split;
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>((tiles + tiles_per_block - 1) / tiles_per_block), 1, 1};
    s.shared_bytes = kPipelineBytes + (p.split > 1 ? kWarps * 32 * 4 * sizeof(float) : 0);
    s.uses_collectives = true;
    return s;
  }

  // One row's share of a step: 32 codes (4 words) and the E4M3 scales of its
  // two 16-value blocks. Rows past N are zeros.
  struct RowStep {
    uint32_t words[4];
    uint8_t scale[2];
  };

  // Where this lane's next step copies from: 16 bytes of codes of rows
  // n0 + g and n0 + g + 8, and the 4 scale bytes of each row that hold its
  // two (bytes 2t and 2t + 1 of the row's 8). Pointers computed once and
  // advanced by a constant per step: recomputing the 64-bit row addresses
  // each step cost more instructions than the copies themselves.
  struct CopyCursor {
    const uint8_t* codes[2];
    const uint8_t* scales[2];
    bool row_in[2];  // rows past N copy nothing and read as zeros
  };

  NVH_HD static CopyCursor first_copy(const Params& p, int64_t n0, int64_t step, int g, int t) {
    CopyCursor c{};
    for (int half = 0; half < 2; ++half) {
      const int64_t n = n0 + g + 8 * half;
      c.row_in[half] = n < p.N;
      if (c.row_in[half]) {
        c.codes[half] = p.packed + n * (p.K / 2) + step * 64 + t * 16;
        c.scales[half] = p.scales + n * (p.K / 16) + step * 8 + (t / 2) * 4;
      }
    }
    return c;
  }

  // A row past N never has a step copied into its half of a slot, so that
  // half is zeroed once, in every stage, before the pipeline starts.
  NVH_HD static void zero_rows_past_n(const CopyCursor& c, uint8_t* slots) {
    for (int stage = 0; stage < kStages; ++stage) {
      for (int half = 0; half < 2; ++half) {
        if (NVFP4_PROBE(c.row_in[half])) continue;
        uint8_t* slot = slots + stage * kStageBytes;
        nvh::store_u32x4(slot + 16 * half, {0u, 0u, 0u, 0u});
        nvh::store_u32(slot + 32 + 4 * half, 0u);
      }
    }
  }

  // Starts copying the cursor's step into this lane's `slot`, then moves the
  // cursor `split` steps on.
  template <class Ctx>
  NVH_HD static void issue_step(Ctx& ctx, const Params& p, CopyCursor& c, uint8_t* slot) {
    for (int half = 0; half < 2; ++half) {
      if (!c.row_in[half]) continue;
      ctx.cp_async16(slot + 16 * half, c.codes[half]);
      ctx.cp_async4(slot + 32 + 4 * half, c.scales[half]);
      c.codes[half] += p.split * 64;
      c.scales[half] += p.split * 8;
    }
  }

  NVH_HD static RowStep row_from_slot(const uint8_t* slot, int half, int t) {
    const nvh::U32x4 v = nvh::load_generic_u32x4(slot + 16 * half);
    const uint32_t scales = nvh::load_generic_u32(slot + 32 + 4 * half);
    const int first = 2 * (t % 2);  // this lane's two bytes in the 4 it copied
    return RowStep{{v.x, v.y, v.z, v.w},
                   {static_cast<uint8_t>(scales >> (8 * first)), static_cast<uint8_t>(scales >> (8 * first + 8))}};
  }

  // The E4M3 scale as a pair of 16-bit floats (exact in both types).
  template <nvh::HalfKind kKind>
  NVH_HD static uint32_t scale_pair(uint8_t e4m3) {
    const float s = nvh::e4m3_to_float(e4m3);
    return nvh::pack_half2_rn(s, s, kKind);
  }

  // Word q of a row's step (codes 8q..8q+7, all under scale block q / 2) as
  // four weight pairs, codes i and i + 4 in pair i (SpreadDecode), scale
  // folded in: first the decode's 2^bias, exactly, then the scale, exactly
  // (one multiply cannot take both: 2^bias times a large scale overflows).
  template <nvh::HalfKind kKind>
  NVH_HD static void weight_pairs(const RowStep& r, int q, uint32_t pairs[4]) {
    const uint32_t scale = scale_pair<kKind>(r.scale[q / 2]);
    SpreadDecode<kKind>::pairs(r.words[q], pairs);
    for (int i = 0; i < 4; ++i) {
      pairs[i] = nvh::mul_half2<kKind>(nvh::mul_half2<kKind>(pairs[i], SpreadDecode<kKind>::kRestore), scale);
    }
  }

  // The activations that meet word q's pairs: 8 consecutive values a0..a7
  // (one 16-byte load) re-paired as the weights are, (a0, a4), (a1, a5),
  // (a2, a6), (a3, a7).
  NVH_HD static void activation_pairs(const uint16_t* act, int q, uint32_t out[4]) {
    const nvh::U32x4 v = nvh::load_u32x4(act + 8 * q);
    out[0] = nvh::byte_perm(v.x, v.z, 0x5410u);
    out[1] = nvh::byte_perm(v.x, v.z, 0x7632u);
    out[2] = nvh::byte_perm(v.y, v.w, 0x5410u);
    out[3] = nvh::byte_perm(v.y, v.w, 0x7632u);
  }

  // One step: word q of rows n0 + g and n0 + g + 8 feeds mmas 2q and 2q + 1,
  // decoded just before them so few registers hold weights at a time.
  // `act`: this lane's 32 activations of the step (row g of A), null when
  // g >= M: those lanes' B columns feed outputs that are never stored, and
  // skipping their loads measured faster at M = 4 than reading row M - 1
  // (about 156 against 166 us on the lm_head, H200).
  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void mma_step(Ctx& ctx, const RowStep& lo, const RowStep& hi, const uint16_t* act, float d[4]) {
    for (int q = 0; q < 4; ++q) {
      uint32_t w_lo[4], w_hi[4], b_pairs[4] = {0u, 0u, 0u, 0u};
      weight_pairs<kKind>(lo, q, w_lo);
      weight_pairs<kKind>(hi, q, w_hi);
      if (NVFP4_PROBE(act != nullptr)) activation_pairs(act, q, b_pairs);
      for (int h = 0; h < 2; ++h) {
        const uint32_t a[4] = {w_lo[2 * h], w_hi[2 * h], w_lo[2 * h + 1], w_hi[2 * h + 1]};
        const uint32_t b[2] = {b_pairs[2 * h], b_pairs[2 * h + 1]};
        ctx.mma_m16n8k16(d, a, b, d, kKind);
      }
    }
  }

  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void run(Ctx& ctx, const Params& p) {
    const uint32_t tiles_per_block = kWarps / p.split;
    const int64_t tile = int64_t{ctx.block_idx().x} * tiles_per_block + ctx.warp() / p.split;
    const int64_t part = ctx.warp() % p.split;
    const int64_t n0 = tile * 16, steps = p.K / kStepK;
    const int g = static_cast<int>(ctx.lane() / 4), t = static_cast<int>(ctx.lane() % 4);
    float d[4] = {0.f, 0.f, 0.f, 0.f};

    if (NVFP4_PROBE(n0 < p.N && part < steps)) {
      // This lane's slot in each of its warp's stages.
      uint8_t* slots = ctx.template shared_mem<uint8_t>() + ctx.warp() * kStages * kStageBytes + ctx.lane() * kSlotBytes;
      const auto slot = [slots](int64_t i) { return slots + (i % kStages) * kStageBytes; };
      CopyCursor copy = first_copy(p, n0, part, g, t);
      zero_rows_past_n(copy, slots);
      // This lane's activations (row g of A, B's column g) from the warp's first step on.
      const uint16_t* act = g < p.M ? p.A + g * p.K + part * kStepK + 32 * t : nullptr;
      int64_t issued = 0;  // steps of this warp whose copy has started
      for (; issued < kStages - 1; ++issued) {
        if (NVFP4_PROBE(part + issued * p.split < steps)) issue_step(ctx, p, copy, slot(issued));
        ctx.cp_async_commit();  // empty groups too, so the wait count below stays uniform
      }
      for (int64_t i = 0, step = part; NVFP4_PROBE(step < steps); ++i, step += p.split) {
        if (NVFP4_PROBE(part + issued * p.split < steps)) issue_step(ctx, p, copy, slot(issued));
        ctx.cp_async_commit();
        ++issued;
        ctx.template cp_async_wait<kStages - 1>();  // step i's copy has landed
        mma_step<kKind>(ctx, row_from_slot(slot(i), 0, t), row_from_slot(slot(i), 1, t), act, d);
        if (act != nullptr) act += p.split * kStepK;
      }
    }

    if (NVFP4_PROBE(p.split > 1)) {
      // The parts meet: each parks its accumulators, part 0 adds them in order.
      float* parked = reinterpret_cast<float*>(ctx.template shared_mem<uint8_t>() + kPipelineBytes);
      for (int i = 0; i < 4; ++i) parked[(ctx.warp() * 32 + ctx.lane()) * 4 + i] = d[i];
      ctx.sync_threads();
      if (NVFP4_PROBE(part != 0)) return;
      for (int i = 0; i < 4; ++i) {
        for (uint32_t w = 1; w < p.split; ++w) d[i] = nvh::add_rn(d[i], parked[((ctx.warp() + w) * 32 + ctx.lane()) * 4 + i]);
      }
    }
    if (NVFP4_PROBE(n0 >= p.N)) return;

    const float global_scale = *p.global_scale;
    for (int i = 0; i < 4; ++i) {
      const int64_t n = n0 + g + (i >= 2 ? 8 : 0), m = 2 * t + (i % 2);
      if (NVFP4_PROBE(n >= p.N || m >= p.M)) continue;
      store_gemv_output<kKind>(p, d[i], global_scale, m, n);
    }
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    if (NVFP4_PROBE(p.kind == nvh::HalfKind::fp16)) {
      run<nvh::HalfKind::fp16>(ctx, p);
    } else {
      run<nvh::HalfKind::bf16>(ctx, p);
    }
  }
};

}  // namespace nvfp4
