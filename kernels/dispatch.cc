#include "kernels/dispatch.h"

#include <optional>
#include <stdexcept>
#include <string>

namespace nvfp4 {
namespace {

// A named predicate: what it states (with the values it saw) and whether it holds.
struct Check {
  bool holds;
  std::string text;  // e.g. "K % 128 == 0 (K = 96)"
  std::string miss;  // reason code when it fails
};

std::string v(const char* name, int64_t value) { return std::string(name) + " = " + std::to_string(value); }

// The first failing check, or none when all hold. A copy: callers pass temporaries.
std::optional<Check> first_failure(const std::vector<Check>& checks) {
  for (const Check& c : checks) {
    if (!c.holds) return c;
  }
  return std::nullopt;
}

bool is_sm12x(const Caps& caps) { return caps.sm >= kNativeSmFirst && caps.sm < kNativeSmEnd; }

std::vector<Check> decode_checks(const Problem& p) {
  return {{p.M <= 8, "M <= 8 (" + v("M", p.M) + ")", "m_above_8"},
          {p.block_size == 16, "block_size == 16 (" + v("block_size", p.block_size) + ")",
           "decode_block_size_not_16"},
          {p.a_address_mod16 % kDecodeOperandAlignment == 0 && p.b_address_mod16 % kDecodeOperandAlignment == 0 &&
               p.scales_address_mod4 % kDecodeScalesAlignment == 0,
           "A and B 16-byte, weight_scale 4-byte aligned (A % 16 = " + std::to_string(p.a_address_mod16) +
               ", B % 16 = " + std::to_string(p.b_address_mod16) +
               ", weight_scale % 4 = " + std::to_string(p.scales_address_mod4) + ")",
           "decode_unaligned"}};
}

std::vector<Check> gemv_mma_checks(const Problem& p, const Caps& caps) {
  return {{p.K % 128 == 0, "K % 128 == 0 (" + v("K", p.K) + ")", "decode_k_not_multiple_of_128"},
          {caps.sm >= kMinMmaSm, "sm >= " + std::to_string(kMinMmaSm) + " (" + v("sm", caps.sm) + ")",
           "decode_sm_below_80"}};
}

Check gemv_scalar_k_check(const Problem& p) {
  return {p.K % 32 == 0, "K % 32 == 0 (" + v("K", p.K) + ")", "decode_k_not_multiple_of_32"};
}

std::vector<Check> native_checks(const Problem& p, const Caps& caps) {
  return {{is_sm12x(caps), "sm 12.x (" + v("sm", caps.sm) + ")", "native_needs_sm_12x"},
          {caps.native_fp4, "block-scaled FP4 matmul available", "native_fp4_unavailable"},
          {p.block_size == 16, "block_size == 16 (" + v("block_size", p.block_size) + ")", ""},
          {p.K % 32 == 0, "K % 32 == 0 (" + v("K", p.K) + ")", ""},
          {p.N % 32 == 0, "N % 32 == 0 (" + v("N", p.N) + ")", ""}};
}

std::vector<Check> vec8_checks(const Problem& p) {
  return {{p.block_size % 2 == 0, "block_size even (" + v("block_size", p.block_size) + ")",
           "odd_block_size"},
          {p.K % 8 == 0, "K % 8 == 0 (" + v("K", p.K) + ")", "k_not_multiple_of_8"},
          {p.b_address_mod16 % kVec8CodesAlignment == 0 && p.scratch_address_mod16 % kVec8ScratchAlignment == 0,
           "B 4-byte and scratch 16-byte aligned (B % 4 = " + std::to_string(p.b_address_mod16 % 4) +
               ", scratch % 16 = " + std::to_string(p.scratch_address_mod16) + ")",
           "unaligned"}};
}

std::vector<Check> nonempty_checks(const Problem& p) {
  return {{p.M > 0, "M > 0 (" + v("M", p.M) + ")", ""},
          {p.N > 0, "N > 0 (" + v("N", p.N) + ")", ""},
          {p.K > 0, "K > 0 (" + v("K", p.K) + ")", ""}};
}

std::vector<Check> hard_preconditions(Route route, const Problem& p, const Caps& caps) {
  std::vector<Check> all = route == Route::empty
                               ? std::vector<Check>{{p.M == 0 || p.N == 0 || p.K == 0,
                                                     "M, N or K == 0 (" + v("M", p.M) + ", " +
                                                         v("N", p.N) + ", " + v("K", p.K) + ")",
                                                     ""}}
                               : nonempty_checks(p);
  const auto add = [&all](const std::vector<Check>& more) { all.insert(all.end(), more.begin(), more.end()); };
  // No branch coverage on the switch below: every Route is a case (each one taken); the one edge never
  // taken is gcc's range check for a value no enumerator has.
  switch (route) {  // LCOV_EXCL_BR_LINE
    case Route::empty:
    case Route::prefill_scalar:
      break;
    case Route::gemv_mma:
      add(decode_checks(p));
      add(gemv_mma_checks(p, caps));
      break;
    case Route::gemv_scalar:
      add(decode_checks(p));
      add({gemv_scalar_k_check(p)});
      break;
    case Route::native_sm120:
      add(native_checks(p, caps));
      break;
    case Route::prefill_vec8:
      add(vec8_checks(p));
      break;
  }
  return all;
}

std::string variant_for(Route route, const Problem& p) {
  // No branch coverage on the switch below: every Route is a case (each one taken); the one edge never
  // taken is gcc's range check for a value no enumerator has.
  switch (route) {  // LCOV_EXCL_BR_LINE
    case Route::empty: return "fill";
    case Route::gemv_mma: return "m16n8k16";
    case Route::gemv_scalar: return "rows" + std::to_string(gemv_scalar_rows_per_warp(p.N));
    case Route::native_sm120: return "cublaslt_block_scaled_fp4";
    case Route::prefill_vec8: return "vec8";
    case Route::prefill_scalar: return "scalar";
  }
  return "";  // LCOV_EXCL_LINE: unreachable, every Route returns above (-Wreturn-type wants it)
}

Decision make(Route route, const Problem& p, std::string reason, std::string detail) {
  return Decision{route, variant_for(route, p), std::move(reason), std::move(detail)};
}

Decision forced(const Problem& p, const Caps& caps, Route route) {
  const std::string failure = route_precondition_failure(route, p, caps);
  if (!failure.empty()) {
    throw std::invalid_argument(std::string("select_route: force_route = ") + route_name(route) +
                                " refused: " + failure);
  }
  return make(route, p, "forced", std::string("forced to ") + route_name(route));
}

Decision empty_route(const Problem& p) {
  const char* reason = p.M == 0 ? "m_zero" : p.N == 0 ? "n_zero" : "k_zero";
  return make(Route::empty, p, reason,
              v("M", p.M) + ", " + v("N", p.N) + ", " + v("K", p.K) + ": nothing to multiply");
}

// The native route's predicates, or why it was passed over (for the detail text).
std::string native_note(const Problem& p, const Caps& caps, const Options& o, bool* take) {
  *take = false;
  if (!o.native_opt_in) return "";
  const std::optional<Check> miss = first_failure(native_checks(p, caps));
  if (!miss) {
    *take = true;
    return "";
  }
  return "; native_sm120 opted in but passed over: " + miss->text + " fails";
}

}  // namespace

int gemv_scalar_rows_per_warp(int64_t N) { return N % 4 == 0 ? 4 : N % 2 == 0 ? 2 : 1; }

std::string native_sm120_missing_capability(const Caps& caps) {
  // The host executor dispatches as an sm_90 device but has no tensor cores of its own.
  if (caps.backend == "host") return "an sm_12x GPU (this is the host executor)";
  if (!is_sm12x(caps)) return "an sm_12x GPU (this device is sm_" + std::to_string(caps.sm) + ")";
  if (!caps.native_fp4) return "cuBLASLt block-scaled FP4 matmul in this build";
  return "";
}

std::string route_precondition_failure(Route route, const Problem& p, const Caps& caps) {
  const auto checks = hard_preconditions(route, p, caps);
  const std::optional<Check> miss = first_failure(checks);
  return miss ? miss->text + " fails" : "";
}

const std::vector<std::string>& route_reasons(Route route) {
  static const std::vector<std::string> kEmpty{"m_zero", "n_zero", "k_zero"};
  static const std::vector<std::string> kMma{"decode_mma"};
  static const std::vector<std::string> kScalar{"decode_k_not_multiple_of_128", "decode_sm_below_80"};
  static const std::vector<std::string> kNative{"native_opted_in"};
  static const std::vector<std::string> kVec8{"m_above_8", "decode_block_size_not_16",
                                               "decode_unaligned", "decode_k_not_multiple_of_32"};
  static const std::vector<std::string> kPrefillScalar{"odd_block_size", "k_not_multiple_of_8",
                                                        "unaligned"};
  // No branch coverage on the switch below: every Route is a case (each one taken); the one edge never
  // taken is gcc's range check for a value no enumerator has.
  switch (route) {  // LCOV_EXCL_BR_LINE
    case Route::empty: return kEmpty;
    case Route::gemv_mma: return kMma;
    case Route::gemv_scalar: return kScalar;
    case Route::native_sm120: return kNative;
    case Route::prefill_vec8: return kVec8;
    case Route::prefill_scalar: return kPrefillScalar;
  }
  return kEmpty;  // LCOV_EXCL_LINE: unreachable, every Route returns above (-Wreturn-type wants it)
}

Decision select_route(const Problem& p, const Caps& actual_caps, const Options& o) {
  const Caps& caps = o.simulated_caps ? *o.simulated_caps : actual_caps;
  if (o.force_route) return forced(p, caps, *o.force_route);
  if (p.M == 0 || p.N == 0 || p.K == 0) return empty_route(p);

  // 1. decode: the tensor-core GEMV, else the scalar GEMV.
  std::string decode_miss, detail;
  if (const std::optional<Check> miss = first_failure(decode_checks(p))) {
    decode_miss = miss->miss;
    detail = miss->text + " fails: decode skipped";
  } else if (const std::optional<Check> mma_miss = first_failure(gemv_mma_checks(p, caps))) {
    const Check k32 = gemv_scalar_k_check(p);
    if (k32.holds) {
      return make(Route::gemv_scalar, p, mma_miss->miss,
                  mma_miss->text + " fails: scalar GEMV, " + k32.text);
    }
    decode_miss = k32.miss;
    detail = k32.text + " fails: decode skipped";
  } else {
    return make(Route::gemv_mma, p, "decode_mma",
                "M <= 8, block_size == 16, K % 128 == 0, sm >= 80 (" + v("M", p.M) + ", " +
                    v("K", p.K) + ", " + v("sm", caps.sm) + ")");
  }

  // 2. native FP4, only when opted in and the device has it.
  bool take_native = false;
  detail += native_note(p, caps, o, &take_native);
  if (take_native) return make(Route::native_sm120, p, "native_opted_in", "opted in; " + detail);

  // 3. prefill: dequantize to scratch, then GEMM.
  if (const std::optional<Check> miss = first_failure(vec8_checks(p))) {
    return make(Route::prefill_scalar, p, miss->miss, detail + "; " + miss->text + " fails: scalar dequant");
  }
  return make(Route::prefill_vec8, p, decode_miss, detail + "; vectorized dequant");
}

}  // namespace nvfp4
