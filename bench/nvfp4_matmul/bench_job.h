// `nvfp4-harness bench`: every route at the shapes that matter, timed against
// the hardware. One run measures both the device-to-device copy ceiling and
// the kernels, so each "share of the ceiling" compares like with like.
//   per case: median time over >= 100 launches after warm-up, inputs rotated
//   over enough sets that the 60 MB L2 cannot serve them, the bytes the
//   kernel must move and their share of the copy ceiling, TFLOP/s for GEMMs.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "harness/backend.h"

namespace nvfp4 {

struct BenchOptions {
  int warmup = 10;
  int reps = 100;
  // empty: all ("prefill", "decode", "sweep", "msweep"); "msweep" is the M
  // sweep of issue 16 (prefill_fused, dequant + GEMM, cuBLAS alone, the
  // weights read alone), timed back to back. "depth" runs only when named:
  // variants of gemv_mma (pipeline depth, K across blocks) and prefill_vec8
  // (rows per thread) beside the routes.
  std::vector<std::string> groups;
  // Only the cases whose name contains one of these (empty: every case of
  // the groups), e.g. to profile one case under Nsight Compute.
  std::vector<std::string> only;
  // The M values of group msweep; empty: issue 16's ten, 9 to 8192.
  std::vector<int64_t> msweep_m;
  // The weight shapes (N, K) of group msweep; empty: issue 16's three,
  // 4096x4096, 14336x4096 and 4096x14336.
  std::vector<std::pair<int64_t, int64_t>> msweep_shapes;
  std::string json_path = "out/bench/bench.json";
  // weight_scale_2 of every input set. The default is a power of two inside
  // the GEMVs' fast-path windows; any other value (e.g. 0.3) times the
  // contract path they take for it (DESIGN.md, "Special values").
  float global_scale = 1.0f / 64;
};

struct BenchRow {
  std::string group, name, what;  // what: dequant, gemm, prefill_e2e, gemv, ...
  int64_t M = 0, N = 0, K = 0;
  double median_us = 0, min_us = 0, max_us = 0;  // each launch between its own events
  // Kernel time: calls back to back, one pair of events around them, divided
  // by their number (median of the trials); 0 where not measured. The launch
  // column is median_us - kernel_us: what one call on its own adds.
  double kernel_us = 0;
  double bytes = 0, flops = 0;
  int launches = 0, input_sets = 0;
};

struct BenchReport {
  double copy_bytes_per_s = 0;
  double write_bytes_per_s = 0;  // cudaMemset: what writing alone reaches
  std::string device;
  std::vector<BenchRow> rows;
};

// "NxK" (e.g. "14336x4096") as a weight shape for group msweep; throws
// std::invalid_argument naming the text when it is not two positive whole
// numbers with K a multiple of 16 (the bench's weights have block_size 16).
std::pair<int64_t, int64_t> parse_weight_shape(const std::string& text);

// Throws std::invalid_argument when the backend is not a GPU.
BenchReport run_bench(nvh::Backend& backend, const BenchOptions& options, std::ostream& progress);

std::string render_bench_table(const BenchReport& report);
std::string render_bench_json(const BenchReport& report);

}  // namespace nvfp4
