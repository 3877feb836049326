#include "bench/nvfp4_matmul/bench_job.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "bench/nvfp4_matmul/gemv_depth.cuh"
#include "bench/nvfp4_matmul/gemv_sliced.cuh"
#include "bench/nvfp4_matmul/gemv_tma.cuh"
#include "bench/nvfp4_matmul/launch_floor.cuh"
#include "bench/nvfp4_matmul/pattern_copy.cuh"
#include "bench/nvfp4_matmul/read_alone.cuh"
#include "harness/gpu_timing.h"
#include "harness/launch.h"
#include "harness/portable_math.h"
#include "kernels/nvfp4_matmul/gemm_step.h"
#include "kernels/nvfp4_matmul/gemv_mma_slices.cuh"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "kernels/nvfp4_matmul/prefill_fused.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_plan.h"
#include "kernels/nvfp4_matmul/prefill_fused_shapes.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_sum.cuh"
#include "kernels/nvfp4_matmul/prefill_vec8.cuh"
#include "kernels/nvfp4_matmul/route_runs.h"

namespace nvfp4 {
namespace {

// One set of operator inputs in device memory, random bits (never zeros:
// zeros can run faster than data and hide unwritten outputs).
struct InputSet {
  nvh::Buffer A, B, scales, g, bias, Y, scratch;
  nvh::Buffer prepacked;  // B prepacked for prefill_fused's wgmma kernel, once asked for
  MatmulArgs args;
};

struct Shape {
  int64_t M, N, K, block_size = 16;
  DType dtype = DType::bf16;
  bool bias = true;
};

std::vector<uint8_t> random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<uint8_t> v(n);
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    const uint64_t r = rng();
    std::memcpy(&v[i], &r, 8);
  }
  for (std::size_t i = n / 8 * 8; i < n; ++i) v[i] = static_cast<uint8_t>(rng());
  return v;
}

std::vector<uint16_t> random_halves(std::mt19937_64& rng, int64_t n, DType t) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<uint16_t> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = nvh::round_to_half_bits(u(rng), half_kind(t));
  return v;
}

std::unique_ptr<InputSet> make_set(nvh::Backend& b, const Shape& s, float g, std::mt19937_64& rng) {
  const int64_t scale_cols = (s.K + s.block_size - 1) / s.block_size;
  auto set = std::make_unique<InputSet>();
  set->A = nvh::Buffer(b, static_cast<std::size_t>(s.M * s.K) * 2);
  set->B = nvh::Buffer(b, static_cast<std::size_t>(s.N * ((s.K + 1) / 2)));
  set->scales = nvh::Buffer(b, static_cast<std::size_t>(s.N * scale_cols));
  set->g = nvh::Buffer(b, sizeof(float));
  set->bias = nvh::Buffer(b, static_cast<std::size_t>(s.N) * 2);
  set->Y = nvh::Buffer(b, static_cast<std::size_t>(s.M * s.N) * 2);
  set->scratch = nvh::Buffer(b, static_cast<std::size_t>(s.N * s.K) * 2);
  set->A.upload(random_halves(rng, s.M * s.K, s.dtype));
  set->B.upload(random_bytes(rng, set->B.bytes()));
  std::vector<uint8_t> sc = random_bytes(rng, set->scales.bytes());
  for (auto& x : sc)
    x = static_cast<uint8_t>(0x28 + x % 0x20);  // E4M3 in [2^-2, 2^2): finite, normal
  set->scales.upload(sc);
  set->g.upload(&g, sizeof g);
  set->bias.upload(random_halves(rng, s.N, s.dtype));
  const ElemType t = elem_type(s.dtype);
  MatmulArgs& a = set->args;
  a.A = {set->A.data(), {s.M, s.K}, t};
  a.B = {set->B.data(), {s.N, (s.K + 1) / 2}, ElemType::e2m1x2};
  a.weight_scale = {set->scales.data(), {s.N, scale_cols}, ElemType::e4m3};
  a.weight_scale_2 = {set->g.data(), {}, ElemType::fp32};
  if (s.bias) a.bias = {set->bias.data(), {s.N}, t};
  a.Y = {set->Y.data(), {s.M, s.N}, t};
  a.scratch = {set->scratch.data(), {s.N, s.K}, t};
  a.block_size = s.block_size;
  return set;
}

std::size_t set_bytes(const Shape& s) {
  return static_cast<std::size_t>(s.M * s.K * 2 + s.N * (s.K + 1) / 2 + s.N * s.K / s.block_size +
                                  s.M * s.N * 2 + s.N * s.K * 2);
}

// Enough input sets that the rotation touches at least 4x the L2 (and two at the least).
int sets_for(const Shape& s, std::size_t l2_bytes) {
  const std::size_t need = 4 * std::max<std::size_t>(l2_bytes, 1);
  return static_cast<int>(std::clamp<std::size_t>((need + set_bytes(s) - 1) / set_bytes(s), 2, 64));
}

double dequant_bytes(const Shape& s) {
  return static_cast<double>(s.N * (s.K / 2) + s.N * ((s.K + s.block_size - 1) / s.block_size) +
                             2 * s.N * s.K);
}
double gemm_bytes(const Shape& s) {
  return 2.0 * static_cast<double>(s.M * s.K + s.N * s.K + s.M * s.N);
}
// Packed codes and their E4M3 scales: what every decode must read.
int64_t weight_bytes(const Shape& s) { return s.N * (s.K / 2) + s.N * (s.K / s.block_size); }
double gemv_bytes(const Shape& s) {
  return static_cast<double>(weight_bytes(s) + 2 * s.M * s.K + 2 * s.M * s.N + 2 * s.N);
}

class Bench {
 public:
  Bench(nvh::Backend& b, const BenchOptions& o, std::ostream& progress)
      : b_(b), o_(o), progress_(progress) {}

  using Sets = std::vector<std::unique_ptr<InputSet>>;
  float global_scale() const { return o_.global_scale; }
  // Whether --only leaves case `name` in.
  bool selected(const std::string& name) const {
    if (o_.only.empty()) return true;
    for (const std::string& part : o_.only) {
      if (name.find(part) != std::string::npos) return true;
    }
    return false;
  }
  // Enough fresh input sets of `shape` that rotating over them defeats the L2.
  Sets make_sets(const Shape& s) {
    std::mt19937_64 rng(s.M * 1315423911u + s.N * 2654435761u + s.K);
    Sets sets;
    const int n = sets_for(s, b_.caps().l2_bytes);
    for (int i = 0; i < n; ++i) sets.push_back(make_set(b_, s, o_.global_scale, rng));
    return sets;
  }

  // Times `launch(set)` rotating over fresh input sets of `shape`.
  void time(const std::string& group, const std::string& name, const std::string& what,
            const Shape& s, double bytes, double flops,
            const std::function<void(InputSet&)>& launch) {
    time_on(make_sets(s), group, name, what, s, bytes, flops, launch);
  }

  // The same over given sets: each launch between its own events, then
  // back to back (kernel_us).
  void time_on(const Sets& sets, const std::string& group, const std::string& name,
               const std::string& what, const Shape& s, double bytes, double flops,
               const std::function<void(InputSet&)>& launch) {
    if (!selected(name)) return;
    const int n = static_cast<int>(sets.size());
    const nvh::TimingStats t =
        nvh::time_launches(b_, o_.warmup, o_.reps, [&](int i) { launch(*sets[i % n]); });
    const nvh::TimingStats k = nvh::time_back_to_back(b_, 2, kTrials, o_.reps / kTrials,
                                                      [&](int i) { launch(*sets[i % n]); });
    BenchRow row{group,    name,     what,        s.M,   s.N,   s.K,        t.median_us,
                 t.min_us, t.max_us, k.median_us, bytes, flops, t.launches, n};
    record(row);
  }
  static constexpr int kTrials = 5;

  // Times `launch()` with no inputs at all (nothing to rotate).
  void time_bare(const std::string& group, const std::string& name, const std::string& what,
                 const std::function<void()>& launch) {
    if (!selected(name)) return;
    const nvh::TimingStats t = nvh::time_launches(b_, o_.warmup, o_.reps, [&](int) { launch(); });
    const nvh::TimingStats k =
        nvh::time_back_to_back(b_, 2, kTrials, o_.reps / kTrials, [&](int) { launch(); });
    record({group, name, what, 0, 0, 0, t.median_us, t.min_us, t.max_us, k.median_us, 0, 0,
            t.launches, 0});
  }

  void record(const BenchRow& row) {
    report_.rows.push_back(row);
    progress_ << "  " << std::left << std::setw(44) << row.name << std::right << std::fixed
              << std::setprecision(1) << std::setw(10) << row.median_us << " us  " << std::setw(5)
              << 100.0 * row.bytes / (row.median_us * 1e-6) / report_.copy_bytes_per_s
              << "% of copy; back to back " << row.kernel_us << " us\n";
  }

  // A device-to-device copy reading and writing `bytes` in all, over enough
  // buffer pairs that the L2 cannot serve them.
  void time_copy(const std::string& group, const std::string& name, const Shape& s, double bytes) {
    if (!selected(name)) return;
    const std::size_t half = static_cast<std::size_t>(bytes / 2);
    const int n =
        static_cast<int>(std::clamp<std::size_t>(4 * b_.caps().l2_bytes / (2 * half) + 1, 2, 64));
    std::vector<nvh::Buffer> src, dst;
    for (int i = 0; i < n; ++i) {
      src.emplace_back(b_, half);
      dst.emplace_back(b_, half);
      b_.fill(src.back().data(), 0x5A, half);
    }
    const nvh::TimingStats t = nvh::time_launches(b_, o_.warmup, o_.reps, [&](int i) {
      nvh::copy_on_device(b_, dst[i % n].data(), src[i % n].data(), half);
    });
    record({group, name, "copy", s.M, s.N, s.K, t.median_us, t.min_us, t.max_us, 0, bytes, 0,
            t.launches, n});
  }

  BenchReport& report() { return report_; }

 private:
  nvh::Backend& b_;
  const BenchOptions& o_;
  std::ostream& progress_;
  BenchReport report_;
};

std::string shape_name(const Shape& s) {
  return "M" + std::to_string(s.M) + "_N" + std::to_string(s.N) + "_K" + std::to_string(s.K);
}

void prefill_group(nvh::Backend& backend, Bench& bench) {
  // What a launch costs before any byte moves: an empty kernel, timed alike.
  bench.time_bare("prefill", "empty kernel (launch floor)", "floor", [&] {
    nvh::launch<LaunchFloor>(backend, LaunchFloor::shape(), LaunchFloor::Params{0});
  });
  for (auto [N, K] : {std::pair<int64_t, int64_t>{4096, 4096}, {6144, 2048}, {2048, 6144}}) {
    const Shape s{1024, N, K};
    const std::string id = shape_name(s);
    const double flops = 2.0 * s.M * s.N * s.K;
    // A copy moving the same bytes (half read, half written): the copy
    // ceiling at this size, where launch and ramp cost what they cost.
    bench.time_copy("prefill", "cudaMemcpy of the same bytes " + id, s, dequant_bytes(s));
    // Writing the scratch alone (cudaMemset), none of the reads: a floor for
    // any dequant into a scratch matrix, whatever its layout.
    bench.time("prefill", "cudaMemset of the scratch alone " + id, "fill", s, 2.0 * s.N * s.K, 0,
               [&](InputSet& in) { backend.fill(in.scratch.data(), 0x3C, in.scratch.bytes()); });
    // The floor of prefill_vec8's access pattern: its loads and stores, no arithmetic.
    bench.time("prefill", "vec8 memory pattern alone " + id, "pattern", s, dequant_bytes(s), 0,
               [&](InputSet& in) {
                 const PatternCopy::Params p{static_cast<const uint8_t*>(in.B.data()),
                                             static_cast<uint16_t*>(in.scratch.data()), s.N, s.K};
                 nvh::launch<PatternCopy>(backend, PatternCopy::shape(p), p);
               });
    bench.time("prefill", "dequant prefill_vec8 " + id, "dequant", s, dequant_bytes(s), 0,
               [&](InputSet& in) {
                 run_dequant(backend, Route::prefill_vec8, in.args, in.scratch.data());
               });
    bench.time("prefill", "dequant prefill_scalar " + id, "dequant", s, dequant_bytes(s), 0,
               [&](InputSet& in) {
                 run_dequant(backend, Route::prefill_scalar, in.args, in.scratch.data());
               });
    bench.time("prefill", "cuBLAS BF16 GEMM alone " + id, "gemm", s, gemm_bytes(s), flops,
               [&](InputSet& in) {
                 run_gemm_step(backend, {in.A.data(), in.scratch.data(), nullptr, in.Y.data(), s.M,
                                         s.N, s.K, s.dtype});
               });
    bench.time("prefill", "prefill e2e (vec8+GEMM+bias) " + id, "prefill_e2e", s,
               dequant_bytes(s) + gemm_bytes(s), flops,
               [&](InputSet& in) { run_matmul(backend, in.args); });
    Shape no_bias = s;
    no_bias.bias = false;
    bench.time("prefill", "prefill e2e without bias " + id, "prefill_e2e", no_bias,
               dequant_bytes(s) + gemm_bytes(s), flops,
               [&](InputSet& in) { run_matmul(backend, in.args); });
  }
}

void decode_group(nvh::Backend& backend, Bench& bench) {
  for (auto [N, K] : {std::pair<int64_t, int64_t>{4096, 4096}, {5120, 25600}, {248320, 2048}}) {
    // Reading the weights and scales once with nothing else to do: the
    // floor for any GEMV of this shape (its activations and outputs are
    // kilobytes), against which the routes' shares of the copy ceiling read.
    // (Every decode shape's codes and scales are whole 16-byte chunks.)
    const Shape weights{1, N, K};
    bench.time(
        "decode", "weight bytes read alone " + shape_name(weights), "read", weights,
        static_cast<double>(weight_bytes(weights)), 0, [&](InputSet& in) {
          const ReadAlone::Params p{static_cast<const uint8_t*>(in.B.data()), N * (K / 2) / 16,
                                    static_cast<const uint8_t*>(in.scales.data()),
                                    N * (K / 16) / 16, static_cast<uint32_t*>(in.Y.data())};
          nvh::launch<ReadAlone>(backend, ReadAlone::shape(backend.caps().multiprocessors), p);
        });
    for (int64_t M : {1, 4, 8}) {
      const Shape s{M, N, K};
      for (Route r : {Route::gemv_mma, Route::gemv_scalar}) {
        Options o;
        o.force_route = r;
        bench.time("decode", std::string(route_name(r)) + " " + shape_name(s), "gemv", s,
                   gemv_bytes(s), 2.0 * M * N * K,
                   [&backend, o](InputSet& in) { run_matmul(backend, in.args, o); });
      }
    }
  }
}

template <int kValues>
void sweep_one(nvh::Backend& backend, Bench& bench, const Shape& s) {
  bench.time("sweep", std::to_string(kValues) + " values/thread " + shape_name(s), "dequant", s,
             dequant_bytes(s), 0, [&](InputSet& in) {
               const DequantParams p{static_cast<const uint8_t*>(in.B.data()),
                                     static_cast<const uint8_t*>(in.scales.data()),
                                     static_cast<const float*>(in.g.data()),
                                     static_cast<uint16_t*>(in.scratch.data()),
                                     s.N,
                                     s.K,
                                     s.block_size,
                                     s.K / s.block_size,
                                     half_kind(s.dtype)};
               nvh::launch<DequantChunk<kValues>>(backend, DequantChunk<kValues>::shape(p), p);
             });
}

void sweep_group(nvh::Backend& backend, Bench& bench) {
  for (auto [N, K] : {std::pair<int64_t, int64_t>{4096, 4096}, {6144, 2048}, {2048, 6144}}) {
    const Shape s{1024, N, K};
    sweep_one<8>(backend, bench, s);
    sweep_one<16>(backend, bench, s);
    sweep_one<32>(backend, bench, s);
  }
}

// prefill_fused's kernel in block shape F with k_slices slices of K,
// whatever the plan would pick (prefill_fused_plan.h): the measurements the
// plan's rules come from. The parts live in the input set's scratch.
// `overlap` false launches prefill_fused_sum the plain way, after the first
// kernel has finished (the route launches it to overlap: the difference is
// that launch's latency).
template <class F>
void time_fused_shape(nvh::Backend& backend, Bench& bench, const Bench::Sets& sets, const Shape& s,
                      const char* shape_label, int32_t k_slices, double bytes, double flops,
                      bool overlap = true) {
  bench.time_on(sets, "msweep",
                std::string("prefill_fused ") + shape_label + "/k" + std::to_string(k_slices) +
                    (overlap ? " " : " sum not overlapped ") + shape_name(s),
                "fused_shape", s, bytes, flops, [&backend, k_slices, overlap](InputSet& in) {
                  const MatmulArgs& a = in.args;
                  const Problem p = describe_problem(a);
                  const auto at = reinterpret_cast<std::uintptr_t>(in.scratch.data());
                  const PrefillFusedParams params = whole_columns(
                      gemv_operands(a, p), reinterpret_cast<float*>((at + 15) / 16 * 16), k_slices);
                  launch_fused<F>(backend, F::shape(params), params);
                  if (k_slices > 1) {
                    nvh::LaunchShape sum = PrefillFusedSum::shape(params);
                    sum.overlaps_prior_grid = overlap;
                    nvh::launch<PrefillFusedSum>(backend, sum, params);
                  }
                });
}

// A wgmma shape's split whose slices meet in a cluster (the plan's
// FusedPlan::cluster_sum), one launch, beside the same split's two kernels.
template <class F>
void time_fused_cluster_sum(nvh::Backend& backend, Bench& bench, const Bench::Sets& sets,
                            const Shape& s, const char* shape_label, int32_t k_slices, double bytes,
                            double flops) {
  bench.time_on(sets, "msweep",
                std::string("prefill_fused ") + shape_label + "/k" + std::to_string(k_slices) +
                    "-cluster " + shape_name(s),
                "fused_shape", s, bytes, flops, [&backend, k_slices](InputSet& in) {
                  const MatmulArgs& a = in.args;
                  launch_fused_cluster_sum<F>(
                      backend,
                      whole_columns(gemv_operands(a, describe_problem(a)), nullptr, k_slices));
                });
}

// The plan's tail split (FusedPlan::tail_tiles: the tiles past the last
// whole round of one slice) in each slice count that fits a round (the
// parts in half the scratch), and in clusters where the kernels have them
// (w128n128's two, w256n128's four, overlapping the rounds): the route's
// runner on hand plans (run_prefill_fused_plan).
void time_fused_tails(nvh::Backend& backend, Bench& bench, const Bench::Sets& sets, const Shape& s,
                      const FusedPlan& plan, double bytes, double flops) {
  const bool two_tiles = plan.shape == FusedShape::w256n128;
  std::vector<FusedPlan> variants;
  for (int32_t k = 2; k <= kFusedMaxKSlices && k * plan.tail_tiles <= kFusedPlanMultiprocessors;
       ++k) {
    FusedPlan v = plan;
    v.tail_k_slices = k;
    v.tail_cluster_sum = false;
    if (k * 4 * s.M <= s.K) variants.push_back(v);
    v.tail_cluster_sum = true;
    if (k == (two_tiles ? kFusedTailClusterSlices : kFusedMaxClusterSlices)) variants.push_back(v);
  }
  for (const FusedPlan& v : variants) {
    bench.time_on(
        sets, "msweep",
        std::string("prefill_fused ") + prefill_fused_variant_name(v) + " " + shape_name(s),
        "fused_shape", s, bytes, flops, [&backend, v](InputSet& in) {
          run_prefill_fused_plan(backend, in.args, describe_problem(in.args), v, in.scratch.data());
        });
  }
}

// Every shape and split the plan could pick for M, around its choice.
void time_fused_shapes(nvh::Backend& backend, Bench& bench, const Bench::Sets& sets, const Shape& s,
                       double bytes, double flops) {
  for (int32_t k : {1, 2, 4, 8}) {
    if (k * 4 * s.M > s.K) continue;  // parts over half the scratch
    if (s.M <= 16)
      time_fused_shape<PrefillFusedM16N64>(backend, bench, sets, s, "m16n64", k, bytes, flops);
    if (s.M <= 32)
      time_fused_shape<PrefillFusedM32N128>(backend, bench, sets, s, "m32n128", k, bytes, flops);
    if (s.M <= 128)
      time_fused_shape<PrefillFusedM64N128>(backend, bench, sets, s, "m64n128", k, bytes, flops);
    if (s.M >= 32)
      time_fused_shape<PrefillFusedM128N128>(backend, bench, sets, s, "m128n128", k, bytes, flops);
    if (s.M > 64 && device_caps(backend).wgmma)  // sm_90a only
      time_fused_shape<PrefillFusedWgmma>(backend, bench, sets, s, "w128n128", k, bytes, flops);
    if (s.M > 128 && device_caps(backend).wgmma)
      time_fused_shape<PrefillFusedWgmmaTiles<2>>(backend, bench, sets, s, "w256n128", k, bytes,
                                                  flops);
    if (k < 2 || k > kFusedMaxClusterSlices || !device_caps(backend).wgmma) continue;
    if (s.M > 64)
      time_fused_cluster_sum<PrefillFusedWgmma>(backend, bench, sets, s, "w128n128", k, bytes,
                                                flops);
    if (s.M > 128)
      time_fused_cluster_sum<PrefillFusedWgmmaTiles<2>>(backend, bench, sets, s, "w256n128", k,
                                                        bytes, flops);
  }
  const FusedPlan plan = prefill_fused_plan(s.M, s.N, s.K, device_caps(backend).wgmma);
  if (plan.tail_tiles > 0 && plan.k_slices == 1) {
    time_fused_tails(backend, bench, sets, s, plan, bytes, flops);
  }
  // The plan's own split once more with the sum launched after the first
  // kernel, not overlapping it: what the overlap buys, in the same run.
  if (plan.k_slices == 1 || plan.cluster_sum) return;
  const std::string label = prefill_fused_variant_name({plan.shape, 1});
  with_fused_shape(plan.shape, [&](auto shape) {
    time_fused_shape<typename decltype(shape)::type>(backend, bench, sets, s, label.c_str(),
                                                     plan.k_slices, bytes, flops, false);
  });
}

// The sliced GEMV (gemv_mma_slices.cuh: gemv_mma's layout for M <= 8,
// prefill_fused's GEMV-shaped path above) with `slices` slices of K, the
// plan's choice or another, both kernels each call (run_gemv_slices, as the
// routes run it); skipped where that many slices do not fit (a slice of A
// past shared memory, or a slice without a stage).
void time_gemv_slices(nvh::Backend& backend, Bench& bench, const Bench::Sets& sets, const Shape& s,
                      uint32_t slices, const char* group = "depth") {
  if (slices > GemvMma::stage_count(s.K) || !GemvMmaSlices::slice_fits(s.M, s.K, slices)) return;
  const bool gemv = s.M <= GemvMmaSlices::kMaxM;
  const uint32_t planned =
      gemv ? GemvMmaSlices::slices_for(s.M, s.N, s.K) : GemvMmaSlices16::slices_for(s.M, s.N, s.K);
  bench.time_on(sets, group,
                std::string(gemv ? "gemv_mma " : "prefill_fused gemv16 ") + std::to_string(slices) +
                    " slices of 8 tiles" + (slices == planned ? " (plan)" : "") + " " +
                    shape_name(s),
                "gemv", s, gemv_bytes(s), 2.0 * s.M * s.N * s.K, [&backend, slices](InputSet& in) {
                  run_gemv_slices(backend, in.args, describe_problem(in.args), slices);
                });
}

// One M-sweep row: route r's runner itself, past the dispatcher (the sweep
// times both routes at every M, the crossover's own side included; forcing
// would refuse prefill_fused above it), bias on or off, on B or on the
// input set's prepacked copy (time_prepacked).
void time_route_row(nvh::Backend& backend, Bench& bench, const Bench::Sets& sets, const Shape& s,
                    const Caps& caps, Route r, bool bias, bool prepacked, double flops) {
  const double bytes = r == Route::prefill_fused ? gemv_bytes(s) : dequant_bytes(s) + gemm_bytes(s);
  bench.time_on(sets, "msweep",
                std::string(route_name(r)) + (prepacked ? " prepacked" : "") +
                    (bias ? " bias " : " ") + shape_name(s),
                r == Route::prefill_fused ? "fused" : "prefill_e2e", s, bytes, flops,
                [&backend, &caps, r, bias, prepacked](InputSet& in) {
                  MatmulArgs a = in.args;
                  if (!bias) a.bias = {};
                  if (prepacked) a.prepacked_B = {in.prepacked.data(), a.B.shape, ElemType::e2m1x2};
                  route_row(r).run(backend, a, describe_problem(a), caps, in.scratch.data());
                });
}

// The M sweep's prefill_fused rows on weights prepacked for its wgmma kernel
// (prepack_for_fused, once per input set, before the timing), bias on and
// off, and the prepack itself (one-time per weight: its row is what one
// costs, not a per-call time).
void time_prepacked(nvh::Backend& backend, Bench& bench, const Bench::Sets& sets, const Shape& s,
                    const Caps& caps, double flops) {
  for (const auto& set : sets) {
    InputSet& in = *set;
    if (!in.prepacked.data()) in.prepacked = nvh::Buffer(backend, in.B.bytes());
    prepack_for_fused(backend, in.args.B, s.K, in.prepacked.data());
  }
  for (bool bias : {true, false}) {
    time_route_row(backend, bench, sets, s, caps, Route::prefill_fused, bias, true, flops);
  }
  bench.time_on(sets, "msweep", "prepack_for_fused (one-time) " + shape_name(s), "prepack", s,
                2.0 * static_cast<double>(s.N * (s.K / 2)), 0, [&backend, &s](InputSet& in) {
                  prepack_for_fused(backend, in.args.B, s.K, in.prepacked.data());
                });
}

// Issue 16's M sweep: per shape and M, the whole operator call on
// prefill_fused and on prefill_vec8 (dequant + GEMM), bias on and off, the
// GEMM step alone on a bf16 W (cuBLAS BF16 alone) and, once per shape, the
// packed weights and scales read alone (the floor for any route that reads
// them once); where the plan is a wgmma shape, prefill_fused on prepacked
// weights too (time_prepacked). One set of inputs per (shape, M) serves
// every row of it.
void msweep_group(nvh::Backend& backend, Bench& bench, std::vector<int64_t> ms,
                  std::vector<std::pair<int64_t, int64_t>> shapes) {
  if (ms.empty()) ms = {9, 16, 32, 64, 128, 256, 512, 1024, 2048, 8192};
  if (shapes.empty()) shapes = {{4096, 4096}, {14336, 4096}, {4096, 14336}};
  for (auto [N, K] : shapes) {
    const Shape weights{1, N, K};
    bench.time(
        "msweep", "weight bytes read alone " + shape_name(weights), "read", weights,
        static_cast<double>(weight_bytes(weights)), 0, [&](InputSet& in) {
          const ReadAlone::Params p{static_cast<const uint8_t*>(in.B.data()), N * (K / 2) / 16,
                                    static_cast<const uint8_t*>(in.scales.data()),
                                    N * (K / 16) / 16, static_cast<uint32_t*>(in.Y.data())};
          nvh::launch<ReadAlone>(backend, ReadAlone::shape(backend.caps().multiprocessors), p);
        });
    for (int64_t M : ms) {
      const Shape s{M, N, K};
      const std::string id = shape_name(s);
      const double flops = 2.0 * M * N * K;
      const Bench::Sets sets = bench.make_sets(s);
      const Caps caps = device_caps(backend);  // once, not in the timed calls
      for (Route r : {Route::prefill_fused, Route::prefill_vec8}) {
        for (bool bias : {true, false}) {
          time_route_row(backend, bench, sets, s, caps, r, bias, false, flops);
        }
      }
      if (is_wgmma_shape(prefill_fused_plan(M, N, K, caps.wgmma).shape)) {
        time_prepacked(backend, bench, sets, s, caps, flops);
      }
      if (M <= 1024) time_fused_shapes(backend, bench, sets, s, gemv_bytes(s), flops);
      if (M > 8 && M <= GemvMmaSlices16::kMaxM) {  // the GEMV-shaped path around the plan's slices
        for (uint32_t slices : {2u, 3u, 4u, 6u, 8u, 12u}) {
          time_gemv_slices(backend, bench, sets, s, slices, "msweep");
        }
      }
      bench.time_on(sets, "msweep", "cuBLAS BF16 GEMM alone " + id, "gemm", s, gemm_bytes(s), flops,
                    [&](InputSet& in) {
                      run_gemm_step(backend, {in.A.data(), in.scratch.data(), nullptr, in.Y.data(),
                                              s.M, s.N, s.K, s.dtype});
                    });
    }
  }
}

// gemv_mma's kernel at kStagesA stages (where A is not pre-paired), past
// the dispatcher, with the route's own split: the unsliced layout, also
// where the route's plan now slices K (gemv_mma_slices.cuh).
template <int kStagesA>
void time_gemv_depth(nvh::Backend& backend, Bench& bench, const Bench::Sets& sets, const Shape& s) {
  bench.time_on(
      sets, "depth", "gemv_mma " + std::to_string(kStagesA) + " stages " + shape_name(s), "gemv", s,
      gemv_bytes(s), 2.0 * s.M * s.N * s.K, [&backend](InputSet& in) {
        const MatmulArgs& a = in.args;
        const Problem p = describe_problem(a);
        const GemvMma::Params params{
            gemv_operands(a, p),
            GemvMma::split_for(p.N, p.K, gemv_mma_target_warps(backend.caps().multiprocessors))};
        nvh::launch<GemvMmaDepth<kStagesA>>(backend, GemvMmaDepth<kStagesA>::shape(params), params);
      });
}

// gemv_mma with each tile's K in `slices` blocks and the fixed-order sum
// of their parts (gemv_sliced.cuh): both kernels in each timed call.
void time_gemv_sliced(nvh::Backend& backend, Bench& bench, const Bench::Sets& sets, const Shape& s,
                      uint32_t slices) {
  nvh::Buffer partial(backend, static_cast<std::size_t>(slices * s.M * s.N) * 4, "partial sums");
  bench.time_on(sets, "depth", "gemv_mma " + std::to_string(slices) + " K slices " + shape_name(s),
                "gemv", s, gemv_bytes(s), 2.0 * s.M * s.N * s.K, [&](InputSet& in) {
                  const GemvOperands out = gemv_operands(in.args, describe_problem(in.args));
                  GemvMmaSliced::Params p;
                  static_cast<GemvOperands&>(p) = out;
                  p.split = GemvMma::kWarps;
                  p.slices = slices;
                  p.partial = static_cast<float*>(partial.data());
                  GemvMmaSliced::check(p);
                  nvh::launch<GemvMmaSliced>(backend, GemvMmaSliced::shape(p), p);
                  const PrefillFusedParams q =
                      whole_columns(out, p.partial, static_cast<int32_t>(slices));
                  nvh::launch<PrefillFusedSum>(backend, PrefillFusedSum::shape(q), q);
                });
}

// prefill_vec8's kernel with kRows rows per thread (the route runs 4).
template <int kRows>
void time_vec8_rows(nvh::Backend& backend, Bench& bench, const Bench::Sets& sets, const Shape& s) {
  bench.time_on(sets, "depth", "vec8 " + std::to_string(kRows) + " rows/thread " + shape_name(s),
                "dequant", s, dequant_bytes(s), 0, [&backend, s](InputSet& in) {
                  const DequantParams p{static_cast<const uint8_t*>(in.B.data()),
                                        static_cast<const uint8_t*>(in.scales.data()),
                                        static_cast<const float*>(in.g.data()),
                                        static_cast<uint16_t*>(in.scratch.data()),
                                        s.N,
                                        s.K,
                                        s.block_size,
                                        s.K / s.block_size,
                                        half_kind(s.dtype)};
                  nvh::launch<DequantChunk<8, kRows>>(backend, DequantChunk<8, kRows>::shape(p), p);
                });
}

// The gemv_mma route itself (forced past the dispatcher), on the depth
// rows' sets: what its plan picks, beside the layouts it picks from.
void time_gemv_mma_route(nvh::Backend& backend, Bench& bench, const Bench::Sets& sets,
                         const Shape& s) {
  Options o;
  o.force_route = Route::gemv_mma;
  bench.time_on(sets, "depth", "gemv_mma route " + shape_name(s), "gemv", s, gemv_bytes(s),
                2.0 * s.M * s.N * s.K,
                [&backend, o](InputSet& in) { run_matmul(backend, in.args, o); });
}

// Issue 16 item 7: gemv_mma's pipeline depth where A is not pre-paired
// (5120 x 25600 at every M; 4096 x 4096 at M = 8), the route's kernel on the
// same sets; prefill_vec8's rows per thread, with the memset of the scratch
// (the write floor) on the same sets. Every row timed back to back too.
void depth_group(nvh::Backend& backend, Bench& bench) {
  for (auto [N, K, M] : {std::tuple<int64_t, int64_t, int64_t>{5120, 25600, 1},
                         {5120, 25600, 4},
                         {5120, 25600, 8},
                         {4096, 4096, 8}}) {
    const Shape s{M, N, K};
    const Bench::Sets sets = bench.make_sets(s);
    time_gemv_depth<2>(backend, bench, sets, s);
    time_gemv_depth<3>(backend, bench, sets, s);
    time_gemv_depth<4>(backend, bench, sets, s);
    time_gemv_depth<6>(backend, bench, sets, s);
    if (s.K == 25600) {
      for (uint32_t slices : {2u, 3u, 4u}) time_gemv_sliced(backend, bench, sets, s, slices);
      for (uint32_t slices : {9u, 13u, 19u, 29u}) time_gemv_slices(backend, bench, sets, s, slices);
    }
    time_gemv_mma_route(backend, bench, sets, s);
  }
  // Where the sliced layout pays: shapes with fewer tiles than a wave of
  // blocks and K of 16 to 56 stages, the unsliced layout ("2 stages")
  // beside slice counts around the plan's.
  for (auto [N, K] :
       {std::pair<int64_t, int64_t>{4096, 14336}, {2048, 8192}, {4096, 8192}, {4096, 4096}}) {
    for (int64_t M : {1, 8}) {
      const Shape s{M, N, K};
      const Bench::Sets sets = bench.make_sets(s);
      time_gemv_depth<2>(backend, bench, sets, s);
      for (uint32_t slices : {2u, 4u, 6u, 8u, 12u, 16u}) {
        time_gemv_slices(backend, bench, sets, s, slices);
      }
      time_gemv_mma_route(backend, bench, sets, s);
    }
  }
  for (auto [N, K] : {std::pair<int64_t, int64_t>{4096, 4096}, {6144, 2048}, {2048, 6144}}) {
    const Shape s{1024, N, K};
    const Bench::Sets sets = bench.make_sets(s);
    bench.time_on(sets, "depth", "cudaMemset of the scratch alone " + shape_name(s), "fill", s,
                  2.0 * s.N * s.K, 0,
                  [&](InputSet& in) { backend.fill(in.scratch.data(), 0x3C, in.scratch.bytes()); });
    time_vec8_rows<2>(backend, bench, sets, s);
    time_vec8_rows<4>(backend, bench, sets, s);
    time_vec8_rows<8>(backend, bench, sets, s);
    time_vec8_rows<16>(backend, bench, sets, s);
  }
}

// The sliced GEMV with its weights streamed by the TMA (gemv_tma.cuh)
// beside the sliced kernel at the same slices and the route, on the same
// sets, for `slices` that fit (a slice of A past shared memory, or a slice
// without a stage, is skipped); a ring of 3 and of 4 slots, all of them or
// one copied before A's slice is pre-paired.
void time_gemv_tma(nvh::Backend& backend, Bench& bench, const Bench::Sets& sets, const Shape& s,
                   uint32_t slices) {
  if (slices > GemvMma::stage_count(s.K) || !GemvMmaSlices::slice_fits(s.M, s.K, slices)) return;
  time_gemv_slices(backend, bench, sets, s, slices, "tma");
  for (int stages : {3, 4}) {
    bench.time_on(
        sets, "tma",
        "gemv_mma tma " + std::to_string(stages) + " slots " + std::to_string(slices) + " slices " +
            shape_name(s),
        "gemv", s, gemv_bytes(s), 2.0 * s.M * s.N * s.K, [&backend, slices, stages](InputSet& in) {
          run_gemv_tma(backend, gemv_operands(in.args, describe_problem(in.args)), slices, stages);
        });
    bench.time_on(sets, "tma",
                  "gemv_mma tma " + std::to_string(stages) + " slots, 1 ahead of A, " +
                      std::to_string(slices) + " slices " + shape_name(s),
                  "gemv", s, gemv_bytes(s), 2.0 * s.M * s.N * s.K,
                  [&backend, slices, stages](InputSet& in) {
                    run_gemv_tma(backend, gemv_operands(in.args, describe_problem(in.args)), slices,
                                 stages, 1);
                  });
  }
}

// Issue 16 item 7: the TMA-fed sliced GEMV against the route on the decode
// shapes, with the weights read alone (the floor) once per shape.
void tma_group(nvh::Backend& backend, Bench& bench) {
  struct Row {
    int64_t N, K;
    std::vector<int64_t> ms;
    std::vector<uint32_t> slices;
  };
  const Row rows[] = {{5120, 25600, {1, 4, 8}, {6, 9, 13, 19}},
                      {4096, 14336, {1, 8}, {4, 8, 12}},
                      {4096, 4096, {1, 8}, {1, 2, 4}},
                      {248320, 2048, {1, 8}, {1}}};
  for (const Row& r : rows) {
    const Shape weights{1, r.N, r.K};
    bench.time(
        "tma", "weight bytes read alone " + shape_name(weights), "read", weights,
        static_cast<double>(weight_bytes(weights)), 0, [&](InputSet& in) {
          const ReadAlone::Params p{static_cast<const uint8_t*>(in.B.data()), r.N * (r.K / 2) / 16,
                                    static_cast<const uint8_t*>(in.scales.data()),
                                    r.N * (r.K / 16) / 16, static_cast<uint32_t*>(in.Y.data())};
          nvh::launch<ReadAlone>(backend, ReadAlone::shape(backend.caps().multiprocessors), p);
        });
    for (int64_t M : r.ms) {
      const Shape s{M, r.N, r.K};
      const Bench::Sets sets = bench.make_sets(s);
      Options o;
      o.force_route = Route::gemv_mma;
      bench.time_on(sets, "tma", "gemv_mma route " + shape_name(s), "gemv", s, gemv_bytes(s),
                    2.0 * s.M * s.N * s.K,
                    [&backend, o](InputSet& in) { run_matmul(backend, in.args, o); });
      for (uint32_t slices : r.slices) time_gemv_tma(backend, bench, sets, s, slices);
    }
  }
}

bool wanted(const BenchOptions& o, const std::string& group) {
  return o.groups.empty() || std::find(o.groups.begin(), o.groups.end(), group) != o.groups.end();
}

}  // namespace

std::pair<int64_t, int64_t> parse_weight_shape(const std::string& text) {
  const auto bad = [&text](const std::string& why) {
    return std::invalid_argument("weight shape \"" + text + "\": " + why);
  };
  const std::size_t x = text.find('x');
  if (x == std::string::npos || text.find('x', x + 1) != std::string::npos) {
    throw bad("expected NxK, e.g. 14336x4096");
  }
  const auto whole = [&bad](const std::string& part, const char* name) {
    if (part.empty() || part.size() > 9 ||
        part.find_first_not_of("0123456789") != std::string::npos) {
      throw bad(std::string(name) + " = \"" + part + "\" is not a whole number below 10^9");
    }
    const int64_t v = std::stoll(part);
    if (v == 0) throw bad(std::string(name) + " = 0");
    return v;
  };
  const int64_t N = whole(text.substr(0, x), "N");
  const int64_t K = whole(text.substr(x + 1), "K");
  if (K % 16 != 0) {
    throw bad("K = " + std::to_string(K) + " is not a multiple of 16 (block_size 16 weights)");
  }
  return {N, K};
}

BenchReport run_bench(nvh::Backend& backend, const BenchOptions& o, std::ostream& progress) {
  if (backend.kind() != nvh::BackendKind::cuda) {
    throw std::invalid_argument("bench: backend = " + backend.name() +
                                ": benchmarks time a GPU; run on a machine with one");
  }
  Bench bench(backend, o, progress);
  BenchReport& r = bench.report();
  r.device = backend.caps().device_name + " (" + backend.arch() + ")";
  r.copy_bytes_per_s = nvh::measure_copy_ceiling(backend, std::size_t{1} << 30, 50);
  progress << "device " << r.device << ": device-to-device copy " << r.copy_bytes_per_s / 1e12
           << " TB/s (read + write, 1 GiB, median of 50)\n";
  r.write_bytes_per_s = nvh::measure_fill_ceiling(backend, std::size_t{1} << 30, 50);
  progress << "write-only (memset) " << r.write_bytes_per_s / 1e12 << " TB/s\n";
  if (wanted(o, "prefill")) prefill_group(backend, bench);
  if (wanted(o, "sweep")) sweep_group(backend, bench);
  if (wanted(o, "decode")) decode_group(backend, bench);
  if (wanted(o, "msweep")) msweep_group(backend, bench, o.msweep_m, o.msweep_shapes);
  if (std::find(o.groups.begin(), o.groups.end(), "depth") != o.groups.end()) {
    depth_group(backend, bench);  // only when asked for: variants, not routes
  }
  if (std::find(o.groups.begin(), o.groups.end(), "tma") != o.groups.end()) {
    tma_group(backend, bench);  // only when asked for, as depth
  }
  return r;
}

std::string render_bench_table(const BenchReport& r) {
  std::ostringstream o;
  o << "device: " << r.device << "; copy ceiling " << std::fixed << std::setprecision(3)
    << r.copy_bytes_per_s / 1e12 << " TB/s (read + write); write-only (memset) "
    << r.write_bytes_per_s / 1e12 << " TB/s\n";
  o << std::left << std::setw(46) << "case" << std::right << std::setw(11) << "median us"
    << std::setw(10) << "MB" << std::setw(9) << "TB/s" << std::setw(9) << "%copy" << std::setw(10)
    << "TFLOP/s" << std::setw(6) << "sets" << std::setw(11) << "kernel us" << std::setw(10)
    << "launch us"
    << "\n";
  for (const BenchRow& row : r.rows) {
    const double s = row.median_us * 1e-6;
    o << std::left << std::setw(46) << row.name << std::right << std::setprecision(1)
      << std::setw(11) << row.median_us << std::setw(10) << row.bytes / 1e6 << std::setprecision(2)
      << std::setw(9) << row.bytes / s / 1e12 << std::setprecision(1) << std::setw(9)
      << 100.0 * row.bytes / s / r.copy_bytes_per_s << std::setw(10)
      << (row.flops > 0 ? row.flops / s / 1e12 : 0.0) << std::setw(6) << row.input_sets
      << std::setw(11) << row.kernel_us << std::setw(10)
      << (row.kernel_us > 0 ? row.median_us - row.kernel_us : 0.0) << "\n";
  }
  return o.str();
}

std::string render_bench_json(const BenchReport& r) {
  nlohmann::json j;
  j["device"] = r.device;
  j["copy_bytes_per_s"] = r.copy_bytes_per_s;
  j["write_bytes_per_s"] = r.write_bytes_per_s;
  for (const BenchRow& row : r.rows) {
    const double s = row.median_us * 1e-6;
    j["rows"].push_back({{"group", row.group},
                         {"name", row.name},
                         {"what", row.what},
                         {"M", row.M},
                         {"N", row.N},
                         {"K", row.K},
                         {"median_us", row.median_us},
                         {"min_us", row.min_us},
                         {"max_us", row.max_us},
                         {"kernel_us", row.kernel_us},
                         {"launches", row.launches},
                         {"input_sets", row.input_sets},
                         {"bytes", row.bytes},
                         {"bytes_per_s", row.bytes / s},
                         {"share_of_copy", row.bytes / s / r.copy_bytes_per_s},
                         {"tflops", row.flops > 0 ? row.flops / s / 1e12 : 0.0}});
  }
  return j.dump(2) + "\n";
}

}  // namespace nvfp4
