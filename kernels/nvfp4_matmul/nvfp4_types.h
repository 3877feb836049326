// The operator's vocabulary: element types, routes, the tensors it takes, and
// what the dispatcher sees and decides. Semantics are DESIGN.md's.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/kernel_ctx.h"

namespace nvfp4 {

// The activation / output type of one operator call.
enum class DType : uint8_t { fp16, bf16 };
const char* dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);
inline nvh::HalfKind half_kind(DType t) {
  return t == DType::fp16 ? nvh::HalfKind::fp16 : nvh::HalfKind::bf16;
}

// Element types of the operator's tensors.
enum class ElemType : uint8_t { fp16, bf16, fp32, e2m1x2, e4m3 };
const char* elem_type_name(ElemType t);
inline ElemType elem_type(DType t) { return t == DType::fp16 ? ElemType::fp16 : ElemType::bf16; }

// Routes in the dispatcher's order (DESIGN.md's table). The route table
// (kernels/nvfp4_matmul/route_table.h) holds one row per enumerator, in this order, and
// static_asserts it; `count_` is not a route but the number of routes.
enum class Route : uint8_t {
  empty,
  gemv_mma,
  gemv_scalar,
  native_sm120,
  prefill_fused,
  prefill_vec8,
  prefill_scalar,
  count_
};
inline constexpr std::size_t kRouteCount = static_cast<std::size_t>(Route::count_);
constexpr std::array<Route, kRouteCount> every_route() {
  std::array<Route, kRouteCount> out{};
  for (std::size_t i = 0; i < kRouteCount; ++i) out[i] = static_cast<Route>(i);
  return out;
}
inline constexpr std::array<Route, kRouteCount> kAllRoutes = every_route();  // in dispatch order
// The route table's name for the route; throws std::invalid_argument for count_.
const char* route_name(Route r);
std::optional<Route> parse_route(std::string_view name);

// A tensor argument: backend memory plus the shape and type the caller claims
// for it; the operator checks the claims before touching the memory.
struct TensorArg {
  void* data = nullptr;
  std::vector<int64_t> shape;
  ElemType type = ElemType::fp16;
  bool present() const { return data != nullptr || !shape.empty(); }
};

// One call of MatMulBlockQuantizedFp4Weight: Y = A * W^T (+ bias).
struct MatmulArgs {
  TensorArg A;               // [M, K] fp16/bf16
  TensorArg B;               // [N, ceil(K/2)] packed E2M1, low nibble = even k
  TensorArg weight_scale;    // [N, ceil(K/block_size)] E4M3
  TensorArg weight_scale_2;  // [] or [1] fp32, in backend memory
  TensorArg bias;            // optional [N], A's type
  TensorArg Y;               // [M, N], A's type
  TensorArg scratch;         // optional [N, K] of A's type: the prefill routes' dequant target
  // Optional: B reordered once by prepack_for_fused (nvfp4_matmul.h), the
  // same shape and type, 16-byte aligned, K % 128 == 0; prefill_fused's wgmma
  // kernel reads it in place of B (the other routes and shapes read B).
  TensorArg prepacked_B;
  int64_t block_size = 16;
};

// What the dispatcher sees of a call.
struct Problem {
  int64_t M = 0, N = 0, K = 0, block_size = 16;
  DType dtype = DType::fp16;
  bool has_bias = false;
  // Addresses modulo 16 (the widest vector access any route makes).
  uint32_t a_address_mod16 = 0;
  uint32_t b_address_mod16 = 0;
  uint32_t scratch_address_mod16 = 0;
  uint32_t scales_address_mod4 = 0;  // weight_scale's address modulo 4
};

// What the dispatcher knows of the device.
struct Caps {
  int sm = 0;               // compute capability as 10*major + minor
  bool native_fp4 = false;  // block-scaled FP4 matmul (cuBLASLt) usable on this device
  // sm_90a's warpgroup mma (wgmma): an sm_90 device and a build with sm_90a
  // code; the host executor emulates it. prefill_fused's plan takes its
  // kernel above M = 64 there, and its crossover moves (dispatch.h).
  bool wgmma = false;
  std::string backend = "host";
};

struct Options {
  std::optional<Route> force_route;
  bool native_opt_in = false;
  std::optional<Caps> simulated_caps;  // decide as if on this device (dispatch tests)
};

// What select_route decides: the route and the reason code, no text (it is
// on the launch path, so it allocates nothing).
struct RouteChoice {
  Route route = Route::empty;
  std::string_view reason;  // a reason code of the route table (static storage)
};

// A decision with its words: what run_matmul returns and explain_route gives.
struct Decision {
  Route route = Route::empty;
  std::string variant;  // e.g. gemv_scalar's rows per warp: "rows4"
  std::string reason;   // a stable code naming the predicate that decided (route_table.h)
  // The same in words, with the values that decided. Built only on request
  // (explain_route): run_matmul leaves it empty.
  std::string detail;
};

// Elements and bytes, with overflow checks (std::invalid_argument naming `what`).
int64_t checked_mul(int64_t a, int64_t b, const char* what);
// ceil(a / b) for a >= 0 and b > 0, for every such pair: (a + b - 1) / b
// would overflow for a or b near INT64_MAX. Throws std::invalid_argument
// naming a negative a or a b <= 0.
int64_t ceil_div(int64_t a, int64_t b);

}  // namespace nvfp4
