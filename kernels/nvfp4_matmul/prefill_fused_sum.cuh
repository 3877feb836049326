// prefill_fused_sum: the second kernel of prefill_fused when its plan splits
// K across blocks (prefill_fused.cuh, k_slices > 1). Each block of the first
// kernel wrote its slice's fp32 sums for the launch's columns [n_begin,
// n_end) to parts[z][m][n - n_begin]; this adds them in the
// fixed order z = 0, 1, ..., S - 1 (so the bits never depend on which block
// finished first), then does what prefill_fused does with one slice: the
// fast path's 2^p restore, the bias, one rounding (store_gemv_output).
//
// Four consecutive outputs of a row a thread where the launch's columns
// are a multiple of 4 (the parts read 16 bytes at a time; grid.x over a
// row's groups, grid.y over rows), else one in a grid-stride loop;
// consecutive threads read consecutive floats of each part and write
// consecutive outputs.
//
// Launched to overlap prefill_fused (programmatic dependent launch, sm_90
// on): its launch and the scheduling of its blocks hide behind the first
// kernel's last blocks, which let it start once their stores are issued
// (PrefillFused::run_kind). Every thread waits for that kernel to finish
// before it reads anything.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"
#include "kernels/nvfp4_matmul/gemv_output.cuh"
#include "kernels/nvfp4_matmul/prefill_fused.cuh"
#include "kernels/nvfp4_matmul/probes.h"

namespace nvfp4 {

struct PrefillFusedSum {
  using Params = PrefillFusedParams;
  static constexpr uint32_t kMaxBlockThreads = 256;
  // Four blocks (32 warps) an SM: the parts' loads wait on the L2, and
  // with ptxas's 96 registers two blocks left a scheduler 3.5 warps, none
  // ready two cycles in three (Nsight Compute, H200, 2026-12-04). With the
  // 2-D grid and the loads first, the calls that split K measured 0.6 to
  // 3.4 % faster and the replay 1.1 %, though the sum on its own (Nsight
  // Compute, one launch) was not faster: the gain is in the call, where it
  // is launched to overlap the first kernel (PERF.md).
  static constexpr int kMinBlocksPerSM = 4;
  // Rows of Y a launch covers at once (grid.y); a grid-stride loop past it.
  static constexpr int64_t kMaxGridRows = 65535;
  // Enough blocks to cover the outputs of the plans' shapes in one pass on a
  // large GPU; the loop covers the rest (outputs one at a time).
  static constexpr int64_t kMaxBlocks = 4096;

  // Outputs a thread adds at a time: 4 when a row of the parts holds whole
  // groups of 4 (each part then starts 16-byte aligned, as the parts do;
  // n_begin, a multiple of a tile's columns, keeps Y's groups aligned too),
  // else 1.
  NVH_HD static int64_t group(const Params& p) { return p.cols() % 4 == 0 ? 4 : 1; }

  // Groups of 4: grid.x over a row's groups, grid.y over rows, so a thread
  // finds its output without a 64-bit division. Else one output a thread
  // in a grid-stride loop.
  static nvh::LaunchShape shape(const Params& p) {
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    if (group(p) == 4) {
      const int64_t row_groups = p.cols() / 4;
      s.grid = {static_cast<uint32_t>((row_groups + kMaxBlockThreads - 1) / kMaxBlockThreads),
                static_cast<uint32_t>(p.M < kMaxGridRows ? p.M : kMaxGridRows), 1};
    } else {
      const int64_t blocks = (p.M * p.cols() + kMaxBlockThreads - 1) / kMaxBlockThreads;
      s.grid = {static_cast<uint32_t>(blocks < kMaxBlocks ? blocks : kMaxBlocks), 1, 1};
    }
    s.overlaps_prior_grid = true;
    return s;
  }

  template <nvh::HalfKind kKind, class Ctx>
  NVH_HD static void run_kind(Ctx& ctx, const Params& p) {
    const float gs = nvh::load_generic_f32(p.global_scale);
    const float restore =
        GemvMma::fast_g<kKind>(gs) ? GemvMma::fast_scales<kKind>(gs).restore : 1.0f;
    const int64_t cols = p.cols(), outputs = p.M * cols;
    if (NVFP4_PROBE(group(p) == 4)) {
      const int64_t c = 4 * (int64_t{ctx.block_idx().x} * kMaxBlockThreads + ctx.thread_idx().x);
      if (NVFP4_PROBE(c >= cols)) return;
      for (int64_t m = ctx.block_idx().y; NVFP4_PROBE(m < p.M); m += ctx.grid_dim().y) {
        sum_row4<kKind>(p, outputs, m, c, restore);
      }
      return;
    }
    const int64_t stride = int64_t{ctx.grid_dim().x} * kMaxBlockThreads;
    const int64_t first = int64_t{ctx.block_idx().x} * kMaxBlockThreads + ctx.thread_idx().x;
    for (int64_t o = first; NVFP4_PROBE(o < outputs); o += stride) {
      float sum = nvh::load_generic_f32(p.parts + o);
      for (int32_t z = 1; NVFP4_PROBE(z < p.k_slices); ++z) {
        sum = nvh::add_rn(sum, nvh::load_generic_f32(p.parts + z * outputs + o));
      }
      store_gemv_output<kKind>(p, nvh::mul_rn(sum, restore), o / cols, p.n_begin + o % cols);
    }
  }

  // Outputs c..c + 3 of row m, each summed over the parts in slice order as
  // the one-output loop adds it, restored, biased and rounded. The bias is
  // loaded before the first store: a store to Y may alias it for all the
  // compiler knows, so loaded an output at a time each load waited on the
  // store before it (four round trips a thread, in the PTX of 2026-12-06;
  // loading it first made the calls with bias up to 5 % faster, PERF.md).
  template <nvh::HalfKind kKind>
  NVH_HD static void sum_row4(const Params& p, int64_t outputs, int64_t m, int64_t c,
                              float restore) {
    float bias[4] = {};  // loaded with the parts: both wait out one round trip
    if (NVFP4_PROBE(p.bias)) {
      for (int j = 0; j < 4; ++j) bias[j] = load_bias<kKind>(p, p.n_begin + c + j);
    }
    float sum[4];
    add_parts4(p, outputs, m * p.cols() + c, sum);
    for (int j = 0; j < 4; ++j) {
      store_gemv_output_biased<kKind>(p, nvh::mul_rn(sum[j], restore), bias[j], m,
                                      p.n_begin + c + j);
    }
  }

  // Outputs o..o + 3 summed over the parts in slice order. Up to kLoadRun
  // slices (prefill_fused's plans have at most kFusedMaxKSlices) every
  // part's load is issued before the first add (the loop unrolled, loads
  // past k_slices not made): one wait on the L2 a group, not one a slice.
  // More (gemv_mma's sliced layout, 9 to 19 on the H200's shapes) keep the
  // loop a slice at a time, which measured 1.4 to 2.5 % faster there
  // (PERF.md, 2026-12-04).
  static constexpr int32_t kLoadRun = 8;
  NVH_HD static void add_parts4(const Params& p, int64_t outputs, int64_t o, float sum[4]) {
    if (NVFP4_PROBE(p.k_slices <= kLoadRun)) {
      nvh::U32x4 v[kLoadRun] = {};  // those past k_slices unread
      NVH_UNROLL
      for (int32_t z = 0; z < kLoadRun; ++z) {
        if (z < p.k_slices) v[z] = nvh::load_generic_u32x4(p.parts + z * outputs + o);
      }
      set_sums(v[0], sum);
      NVH_UNROLL
      for (int32_t z = 1; z < kLoadRun; ++z) {
        if (z < p.k_slices) add_sums(v[z], sum);
      }
      return;
    }
    set_sums(nvh::load_generic_u32x4(p.parts + o), sum);
    for (int32_t z = 1; z < p.k_slices; ++z)
      add_sums(nvh::load_generic_u32x4(p.parts + z * outputs + o), sum);
  }
  NVH_HD static void set_sums(const nvh::U32x4& v, float sum[4]) {
    sum[0] = nvh::bits_to_float(v.x);
    sum[1] = nvh::bits_to_float(v.y);
    sum[2] = nvh::bits_to_float(v.z);
    sum[3] = nvh::bits_to_float(v.w);
  }
  NVH_HD static void add_sums(const nvh::U32x4& v, float sum[4]) {
    sum[0] = nvh::add_rn(sum[0], nvh::bits_to_float(v.x));
    sum[1] = nvh::add_rn(sum[1], nvh::bits_to_float(v.y));
    sum[2] = nvh::add_rn(sum[2], nvh::bits_to_float(v.z));
    sum[3] = nvh::add_rn(sum[3], nvh::bits_to_float(v.w));
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    ctx.wait_prior_grid();  // the parts are the first kernel's, maybe not all written yet
    if (NVFP4_PROBE(p.kind == nvh::HalfKind::fp16)) {
      run_kind<nvh::HalfKind::fp16>(ctx, p);
    } else {
      run_kind<nvh::HalfKind::bf16>(ctx, p);
    }
  }
};

}  // namespace nvfp4
