#include "kernels/nvfp4_matmul/nvfp4_matmul.h"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "harness/launch.h"
#include "harness/route_record.h"
#include "kernels/nvfp4_matmul/empty.cuh"
#include "kernels/nvfp4_matmul/gemm_step.h"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"
#include "kernels/nvfp4_matmul/gemv_mma_slices.cuh"
#include "kernels/nvfp4_matmul/gemv_scalar.cuh"
#include "kernels/nvfp4_matmul/native_sm120.h"
#include "kernels/nvfp4_matmul/prefill_fused.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_plan.h"
#include "kernels/nvfp4_matmul/prefill_fused_prepack.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_shapes.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_sum.cuh"
#include "kernels/nvfp4_matmul/prefill_scalar.cuh"
#include "kernels/nvfp4_matmul/prefill_vec8.cuh"
#include "kernels/nvfp4_matmul/route_runs.h"
#include "kernels/nvfp4_matmul/route_table.h"

namespace nvfp4 {
namespace {

const float* global_scale_of(const MatmulArgs& a) {
  return static_cast<const float*>(a.weight_scale_2.data);
}

}  // namespace

GemvOperands gemv_operands(const MatmulArgs& a, const Problem& p) {
  return GemvOperands{static_cast<const uint16_t*>(a.A.data),
                      static_cast<const uint8_t*>(a.B.data),
                      static_cast<const uint8_t*>(a.weight_scale.data),
                      global_scale_of(a),
                      static_cast<const uint16_t*>(a.bias.data),
                      static_cast<uint16_t*>(a.Y.data),
                      p.M,
                      p.N,
                      p.K,
                      half_kind(p.dtype)};
}

namespace {

template <class Sliced>
void launch_gemv_slices(nvh::Backend& backend, const MatmulArgs& a, const Problem& p,
                        uint32_t slices) {
  typename Sliced::Params params;
  static_cast<GemvOperands&>(params) = gemv_operands(a, p);
  params.split = 1;
  params.slices = slices;
  params.parts = static_cast<float*>(backend.workspace(Sliced::parts_bytes(params)));
  nvh::launch<Sliced>(backend, Sliced::shape(params), params);
  // The parts' sum in slice order is prefill_fused's own second kernel.
  const PrefillFusedParams sum = whole_columns(params, params.parts, static_cast<int32_t>(slices));
  nvh::launch<PrefillFusedSum>(backend, PrefillFusedSum::shape(sum), sum);
}

}  // namespace

void run_gemv_slices(nvh::Backend& backend, const MatmulArgs& a, const Problem& p,
                     uint32_t slices) {
  if (p.M <= GemvMmaSlices::kMaxM) {
    launch_gemv_slices<GemvMmaSlices>(backend, a, p, slices);
  } else {
    launch_gemv_slices<GemvMmaSlices16>(backend, a, p, slices);
  }
}

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

[[noreturn]] void bad(const std::string& what) {
  throw std::invalid_argument("run_matmul: " + what);
}

int64_t element_count(const TensorArg& t, const char* name) {
  int64_t n = 1;
  for (int64_t d : t.shape) n = checked_mul(n, d, name);
  return n;
}

// Checks one tensor against the shape and type the contract gives it.
void require(const char* name, const TensorArg& t, const std::vector<int64_t>& shape,
             ElemType type) {
  if (t.shape != shape) {
    bad(std::string(name) + ".shape = " + shape_text(t.shape) + ": expected " + shape_text(shape));
  }
  if (t.type != type) {
    bad(std::string(name) + ".type = " + elem_type_name(t.type) + ": expected " +
        elem_type_name(type));
  }
  const int64_t elements = element_count(t, name);
  if (elements > 0 && t.data == nullptr) {
    bad(std::string(name) + ".data = null with " + std::to_string(elements) + " elements");
  }
}

void require_rank(const char* name, const TensorArg& t, std::size_t rank) {
  if (t.shape.size() != rank) {
    bad(std::string(name) + ".shape = " + shape_text(t.shape) + ": expected rank " +
        std::to_string(rank));
  }
  for (int64_t d : t.shape) {
    if (d < 0) bad(std::string(name) + ".shape = " + shape_text(t.shape) + ": negative dimension");
  }
}

// Kernels index rows and K in 32 bits and cuBLAS takes int dimensions; with
// each below 2^31 no product of two of them overflows 64 bits. Checked as soon
// as each is known, so a huge value is named as itself, not as a shape derived
// from it.
void require_int32(const char* name, int64_t v) {
  if (v > INT32_MAX) bad(std::string(name) + " = " + std::to_string(v) + ": larger than 2^31 - 1");
}

uint32_t address_mod(const void* p, uint32_t to) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p) % to);
}

// Every element must sit at an address its type can be loaded from.
void require_element_alignment(const char* name, const TensorArg& t, uint32_t bytes) {
  if (t.data && address_mod(t.data, bytes) != 0) {
    bad(std::string(name) + ".data = " + std::to_string(reinterpret_cast<uintptr_t>(t.data)) +
        ": not aligned to its " + std::to_string(bytes) + "-byte elements");
  }
}

// What prefill_fused_prepack's order needs of codes of B's shape, read or
// written: K % 128 == 0 (its 128-k row stages), 16-byte alignment (its
// 16-byte accesses; the TMA reads the copy).
void require_prepack_order(const char* name, const TensorArg& t, int64_t K) {
  if (K % PrefillFusedPrepack::kStageK != 0) {
    bad(std::string(name) + " with K = " + std::to_string(K) +
        ": prefill_fused's prepacked order needs K % 128 == 0");
  }
  if (t.data && address_mod(t.data, 16) != 0) {
    bad(std::string(name) + ".data = " + std::to_string(reinterpret_cast<uintptr_t>(t.data)) +
        ": not 16-byte aligned");
  }
}

void record_launch(const nvh::Backend& backend, const Decision& d, const Problem& p) {
  nvh::LaunchRecord r;
  r.op = "nvfp4_matmul";
  r.route = route_name(d.route);
  r.variant = d.variant;
  r.reason = d.reason;
  r.backend = backend.name();
  r.arch = backend.arch();
  r.attrs = {{"M", std::to_string(p.M)},     {"N", std::to_string(p.N)},
             {"K", std::to_string(p.K)},     {"block_size", std::to_string(p.block_size)},
             {"dtype", dtype_name(p.dtype)}, {"bias", p.has_bias ? "1" : "0"}};
  nvh::RouteRecorder::global().record(std::move(r));
}

void run_empty(nvh::Backend& backend, const MatmulArgs& a, const Problem& p) {
  if (p.M == 0 || p.N == 0) return;  // Y has no elements: nothing to launch
  const EmptyFill::Params params{static_cast<const uint16_t*>(a.bias.data),
                                 static_cast<uint16_t*>(a.Y.data), p.M, p.N, half_kind(p.dtype)};
  nvh::launch<EmptyFill>(backend, EmptyFill::shape(params), params);
}

// gemv_scalar with accumulators for the smallest of 1, 2, 4, 8 rows of A
// that holds M (fewer registers, more warps in flight at small M).
template <int kRows>
void run_gemv_scalar_rows(nvh::Backend& backend, const GemvScalar::Params& params) {
  const nvh::LaunchShape shape = GemvScalar::shape(params, kRows);
  if (params.M <= 1) {
    nvh::launch<GemvScalarRows<kRows, 1>>(backend, shape, params);
  } else if (params.M <= 2) {
    nvh::launch<GemvScalarRows<kRows, 2>>(backend, shape, params);
  } else if (params.M <= 4) {
    nvh::launch<GemvScalarRows<kRows, 4>>(backend, shape, params);
  } else {
    nvh::launch<GemvScalarRows<kRows, 8>>(backend, shape, params);
  }
}

void run_gemv_scalar(nvh::Backend& backend, const MatmulArgs& a, const Problem& p) {
  const GemvScalar::Params params = gemv_operands(a, p);
  switch (gemv_scalar_rows_per_warp(p.N)) {
    case 4:
      run_gemv_scalar_rows<4>(backend, params);
      break;
    case 2:
      run_gemv_scalar_rows<2>(backend, params);
      break;
    default:
      run_gemv_scalar_rows<1>(backend, params);
      break;
  }
}

// gemv_mma in the route's own layout, or, where its plan slices K
// (gemv_mma_slices.cuh), the sliced kernel.
void run_gemv_mma(nvh::Backend& backend, const MatmulArgs& a, const Problem& p) {
  const uint32_t slices = GemvMmaSlices::slices_for(p.M, p.N, p.K);
  if (slices > 1) {
    run_gemv_slices(backend, a, p, slices);
    return;
  }
  const GemvMma::Params params{
      gemv_operands(a, p),
      GemvMma::split_for(p.N, p.K, gemv_mma_target_warps(backend.caps().multiprocessors))};
  nvh::launch<GemvMma>(backend, GemvMma::shape(params), params);
}

// prefill_fused as its plan says (prefill_fused_plan.h): one block shape,
// and with K split across blocks the parts in the workspace, then their sum,
// or the slices meeting in clusters. With a tail split, first the tiles
// before the tail (one slice; by hand, clusters), then the tail's as above,
// launched beside them where it overlaps (prefill_fused_tail_overlaps: the
// tiles before it lead, the tail follows).
template <class Fused>
void run_prefill_fused_shape(nvh::Backend& backend, PrefillFusedParams params,
                             const FusedPlan& plan) {
  const bool overlaps = prefill_fused_tail_overlaps(plan);
  if (plan.tail_tiles > 0) {
    PrefillFusedParams before = params;
    before.n_end = prefill_fused_tail_begin(plan, params.N);
    if (plan.cluster_sum) {
      launch_fused_cluster_sum<Fused>(backend, before);
    } else {
      before.k_slices = 1;
      nvh::LaunchShape shape = Fused::shape(before);
      set_overlap(shape, overlaps ? FusedOverlap::leads : FusedOverlap::none);
      launch_fused<Fused>(backend, shape, before);
    }
    params.n_begin = before.n_end;
    params.k_slices = plan.tail_k_slices;
  }
  if (plan.tail_tiles > 0 ? plan.tail_cluster_sum : plan.cluster_sum) {
    launch_fused_cluster_sum<Fused>(backend, params,
                                    overlaps ? FusedOverlap::follows : FusedOverlap::none);
    return;
  }
  launch_fused<Fused>(backend, Fused::shape(params), params);
  if (params.k_slices > 1) {
    nvh::launch<PrefillFusedSum>(backend, PrefillFusedSum::shape(params), params);
  }
}

}  // namespace

// The parts go in the caller's scratch when there is one (any [N, K] of A's
// type holds them: the plan keeps them to half of it), else in a buffer of
// its own, freed once the launch is done.
void run_prefill_fused_plan(nvh::Backend& backend, const MatmulArgs& a, const Problem& p,
                            const FusedPlan& plan, void* scratch) {
  if (const std::string fault = prefill_fused_plan_fault(plan, p.N, p.K); !fault.empty()) {
    throw std::invalid_argument("run_prefill_fused_plan: " + fault + " (plan " +
                                prefill_fused_variant_name(plan) + ", M = " + std::to_string(p.M) +
                                ", N = " + std::to_string(p.N) + ", K = " + std::to_string(p.K) +
                                ")");
  }
  if (plan.gemv_slices > 1) {
    run_gemv_slices(backend, a, p, plan.gemv_slices);
    return;
  }
  PrefillFusedParams params = whole_columns(gemv_operands(a, p), nullptr, plan.k_slices);
  if (a.prepacked_B.data && is_wgmma_shape(plan.shape)) {
    params.packed = static_cast<const uint8_t*>(a.prepacked_B.data);
    params.prepacked = true;
  }
  nvh::Buffer own_parts;
  const std::size_t bytes = prefill_fused_workspace_bytes(p.M, p.N, plan);  // 0: no parts
  if (bytes > 0) {
    if (!scratch) {
      own_parts = nvh::Buffer(backend, bytes, "prefill_fused parts (its own)");
      scratch = own_parts.data();
    }
    const auto at = reinterpret_cast<std::uintptr_t>(scratch);
    params.parts = reinterpret_cast<float*>((at + 15) / 16 * 16);
  }
  with_fused_shape(plan.shape, [&](auto shape) {
    run_prefill_fused_shape<typename decltype(shape)::type>(backend, params, plan);
  });
  if (own_parts.data()) backend.synchronize();  // the parts are freed on return
}

namespace {

void dequant(nvh::Backend& backend, Route route, const MatmulArgs& a, const Problem& p,
             void* scratch) {
  const int64_t scale_cols = ceil_div(p.K, p.block_size);
  const auto* packed = static_cast<const uint8_t*>(a.B.data);
  const auto* scales = static_cast<const uint8_t*>(a.weight_scale.data);
  auto* out = static_cast<uint16_t*>(scratch);
  const int64_t rows = p.N;
  if (route == Route::prefill_vec8) {
    const DequantParams params{packed,       scales,     global_scale_of(a), out, rows, p.K,
                               p.block_size, scale_cols, half_kind(p.dtype)};
    nvh::launch<PrefillVec8>(backend, PrefillVec8::shape(params), params);
  } else {
    const PrefillScalar::Params params = PrefillScalar::make_params(
        packed, scales, global_scale_of(a), out, rows, p.K, p.block_size, half_kind(p.dtype));
    const nvh::LaunchShape shape = PrefillScalar::shape(params, backend.caps().multiprocessors);
    if (PrefillScalar::narrow_indices(params)) {
      nvh::launch<PrefillScalarOn<uint32_t>>(backend, shape, params);
    } else {
      nvh::launch<PrefillScalarOn<int64_t>>(backend, shape, params);
    }
  }
}

GemmStepArgs gemm_args(const MatmulArgs& a, const Problem& p, const void* scratch) {
  return GemmStepArgs{a.A.data, scratch, a.bias.data, a.Y.data, p.M, p.N, p.K, p.dtype};
}

// The prefill routes: dequantize into the scratch, then the GEMM step.
void run_prefill(nvh::Backend& backend, Route route, const MatmulArgs& a, const Problem& p,
                 void* scratch) {
  dequant(backend, route, a, p, scratch);
  run_gemm_step(backend, gemm_args(a, p, scratch));
}

}  // namespace

// The route table's runners (route_runs.h).
void run_empty_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& p, const Caps&,
                     void*) {
  run_empty(backend, args, p);
}
void run_gemv_mma_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& p,
                        const Caps&, void*) {
  run_gemv_mma(backend, args, p);
}
void run_gemv_scalar_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& p,
                           const Caps&, void*) {
  run_gemv_scalar(backend, args, p);
}
// LCOV_EXCL_START: an sm_12x GPU only (run_matmul throws RouteUnavailable before it elsewhere)
void run_native_sm120_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& p,
                            const Caps&, void*) {
  run_native_sm120(backend, args, p);
}
// LCOV_EXCL_STOP
void run_prefill_fused_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& p,
                             const Caps& caps, void* scratch) {
  run_prefill_fused_plan(backend, args, p, prefill_fused_plan(p.M, p.N, p.K, caps.wgmma), scratch);
}
void run_prefill_vec8_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& p,
                            const Caps&, void* scratch) {
  run_prefill(backend, Route::prefill_vec8, args, p, scratch);
}
void run_prefill_scalar_route(nvh::Backend& backend, const MatmulArgs& args, const Problem& p,
                              const Caps&, void* scratch) {
  run_prefill(backend, Route::prefill_scalar, args, p, scratch);
}

void prepack_for_fused(nvh::Backend& backend, const TensorArg& B, int64_t K, void* out) {
  require_rank("B", B, 2);
  require("B", B, {B.shape[0], ceil_div(K, 2)}, ElemType::e2m1x2);
  require_prepack_order("B", B, K);
  const TensorArg to{out, B.shape, ElemType::e2m1x2};
  require("out", to, B.shape, ElemType::e2m1x2);  // its shape is B's: a null `out` is what it names
  require_prepack_order("out", to, K);
  const PrefillFusedPrepack::Params params{static_cast<const uint8_t*>(B.data),
                                           static_cast<uint8_t*>(out), B.shape[0], K};
  if (params.N == 0 || K == 0) return;  // no stage to reorder
  nvh::launch<PrefillFusedPrepack>(backend, PrefillFusedPrepack::shape(params), params);
}

int64_t gemv_mma_target_warps(int multiprocessors) {
  // No branch coverage below: a GPU reports multiprocessors, the host executor none; gcov sees only
  // the host.
  return int64_t{multiprocessors > 0 ? multiprocessors : 4} * 32;  // LCOV_EXCL_BR_LINE
}

RouteUnavailable::RouteUnavailable(Route route, std::string missing)
    : std::runtime_error(std::string("route ") + route_name(route) +
                         " is hardware-gated here: needs " + missing),
      route_(route),
      missing_(std::move(missing)) {}

Problem describe_problem(const MatmulArgs& a) {
  Problem p;
  if (a.block_size <= 0) bad("block_size = " + std::to_string(a.block_size) + ": must be positive");
  require_int32("block_size", a.block_size);
  p.block_size = a.block_size;

  require_rank("A", a.A, 2);
  if (a.A.type != ElemType::fp16 && a.A.type != ElemType::bf16) {
    bad(std::string("A.type = ") + elem_type_name(a.A.type) + ": expected fp16 or bf16");
  }
  p.dtype = a.A.type == ElemType::fp16 ? DType::fp16 : DType::bf16;
  p.M = a.A.shape[0];
  p.K = a.A.shape[1];
  require_int32("M", p.M);
  require_int32("K", p.K);
  require("A", a.A, {p.M, p.K}, a.A.type);

  require_rank("B", a.B, 2);
  p.N = a.B.shape[0];
  require_int32("N", p.N);
  require("B", a.B, {p.N, ceil_div(p.K, 2)}, ElemType::e2m1x2);
  require("weight_scale", a.weight_scale, {p.N, ceil_div(p.K, p.block_size)}, ElemType::e4m3);
  if (a.weight_scale_2.shape.empty()) {
    require("weight_scale_2", a.weight_scale_2, {}, ElemType::fp32);
  } else {
    require("weight_scale_2", a.weight_scale_2, {1}, ElemType::fp32);
  }
  if (a.weight_scale_2.data == nullptr) bad("weight_scale_2.data = null");
  p.has_bias = a.bias.present();
  if (p.has_bias) require("bias", a.bias, {p.N}, a.A.type);
  require("Y", a.Y, {p.M, p.N}, a.A.type);
  if (a.scratch.present()) require("scratch", a.scratch, {p.N, p.K}, a.A.type);
  if (a.prepacked_B.present()) {
    require("prepacked_B", a.prepacked_B, a.B.shape, ElemType::e2m1x2);
    require_prepack_order("prepacked_B", a.prepacked_B, p.K);
  }

  require_element_alignment("A", a.A, 2);
  require_element_alignment("weight_scale_2", a.weight_scale_2, 4);
  require_element_alignment("bias", a.bias, 2);
  require_element_alignment("Y", a.Y, 2);
  require_element_alignment("scratch", a.scratch, 2);
  p.a_address_mod16 = address_mod(a.A.data, 16);
  p.b_address_mod16 = address_mod(a.B.data, 16);
  p.scratch_address_mod16 = a.scratch.present() ? address_mod(a.scratch.data, 16) : 0;
  p.scales_address_mod4 = address_mod(a.weight_scale.data, 4);
  return p;
}

Caps h200_caps(const std::string& backend) {
  Caps caps;
  caps.backend = backend;
  caps.sm = 90;
  caps.native_fp4 = false;
  caps.wgmma = true;  // on the host emulated (host_executor.h)
  return caps;
}

Caps device_caps(const nvh::Backend& backend) {
  if (backend.kind() ==
      nvh::BackendKind::host) {  // LCOV_EXCL_BR_LINE: the else needs a GPU backend
    return h200_caps(backend.name());
  }
  // LCOV_EXCL_START: a GPU backend only; a host-only (gcov) build cannot make one.
  Caps caps;
  caps.backend = backend.name();
  caps.sm = backend.caps().sm();
  caps.native_fp4 = native_fp4_available(backend);  // sm 10.x / 12.x in a CUDA build
#if defined(NVFP4_HAVE_SM90A)
  caps.wgmma = caps.sm == 90;
#endif
  return caps;
  // LCOV_EXCL_STOP
}

std::size_t scratch_bytes(const Problem& p) { return static_cast<std::size_t>(p.N * p.K) * 2; }

void run_dequant(nvh::Backend& backend, Route route, const MatmulArgs& args, void* scratch) {
  if (!route_row(route).needs_scratch)
    bad(std::string("run_dequant: route = ") + route_name(route) + ": not a prefill route");
  const Problem p = describe_problem(args);
  if (p.N == 0 || p.K == 0) return;
  Problem with_scratch = p;
  with_scratch.scratch_address_mod16 = address_mod(scratch, 16);
  const std::string failure = route_precondition_failure(route, with_scratch, device_caps(backend));
  if (!failure.empty())
    bad(std::string("run_dequant: ") + route_name(route) + " refused: " + failure);
  dequant(backend, route, args, p, scratch);
}

Decision run_matmul(nvh::Backend& backend, const MatmulArgs& args, const Options& options) {
  const Problem p = describe_problem(args);
  const Caps device = device_caps(backend);
  const RouteChoice choice = select_route(p, device, options);
  const RouteRow& row = route_row(choice.route);
  // The route runs with the caps it was chosen with (simulated ones too, so
  // the host executor runs what an sm_80 device would), but never with a
  // wgmma this device lacks.
  Caps caps = options.simulated_caps ? *options.simulated_caps : device;
  caps.wgmma = caps.wgmma && device.wgmma;

  if (row.missing_capability) {
    const std::string missing = row.missing_capability(device);
    // No branch coverage below: the capability is there only on an sm_12x GPU.
    if (!missing.empty()) throw RouteUnavailable(row.route, missing);  // LCOV_EXCL_BR_LINE
  }

  Decision d{row.route, row.variant(p, caps), std::string(choice.reason), ""};
  nvh::Buffer own_scratch;
  void* scratch = args.scratch.data;
  if (row.needs_scratch) {
    if (!scratch) {
      own_scratch = nvh::Buffer(backend, scratch_bytes(p), "scratch (run_matmul's own)");
      scratch = own_scratch.data();
    }
    d.variant += "+" + gemm_step_variant(backend, gemm_args(args, p, scratch));
  }

  row.run(backend, args, p, caps, scratch);
  if (own_scratch.data()) backend.synchronize();  // the scratch is freed on return
  record_launch(backend, d, p);
  return d;
}

}  // namespace nvfp4
