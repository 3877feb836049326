// The route table's rows (route_table.h): each route's predicates, reason
// codes, variant, runner and flags, written once.
#include "kernels/nvfp4_matmul/route_table.h"

#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/nvfp4_matmul/dispatch.h"
#include "kernels/nvfp4_matmul/gemv_mma_slices.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_plan.h"
#include "kernels/nvfp4_matmul/route_runs.h"

namespace nvfp4 {
namespace {

std::string value(const char* name, int64_t v) {
  return std::string(name) + " = " + std::to_string(v);
}

bool is_sm12x(const Caps& caps) { return caps.sm >= kNativeSmFirst && caps.sm < kNativeSmEnd; }

// The statements below spell these constants out (a string literal cannot
// be built from them in C++17); the reason codes name some of them too.
static_assert(kMinMmaSm == 80, "kSmAtLeast80's statement and decode_sm_below_80 say 80");
static_assert(kNativeSmFirst == 120 && kNativeSmEnd == 130, "kSm12x's statement says 12.x");
static_assert(kFusedOperandAlignment == 16 && kFusedScalesAlignment == 4,
              "kFusedAligned's statement says these byte counts");
static_assert(kDecodeOperandAlignment == 16 && kDecodeScalesAlignment == 4 &&
                  kVec8CodesAlignment == 4 && kVec8ScratchAlignment == 16,
              "the alignment statements say these byte counts");

// ---------------------------------------------------------------------------
// The predicates. `miss` is the reason code a stand-in route is taken for
// when this one fails (route_table.h, passed_over).

constexpr RoutePredicate kDimsZero{
    "M, N or K == 0",
    [](const Problem& p, const Caps&) {
      return value("M", p.M) + ", " + value("N", p.N) + ", " + value("K", p.K);
    },
    [](const Problem& p, const Caps&) { return p.M == 0 || p.N == 0 || p.K == 0; }, nullptr};

constexpr RoutePredicate kMPositive{
    "M > 0", [](const Problem& p, const Caps&) { return value("M", p.M); },
    [](const Problem& p, const Caps&) { return p.M > 0; }, "m_zero"};
constexpr RoutePredicate kNPositive{
    "N > 0", [](const Problem& p, const Caps&) { return value("N", p.N); },
    [](const Problem& p, const Caps&) { return p.N > 0; }, "n_zero"};
constexpr RoutePredicate kKPositive{
    "K > 0", [](const Problem& p, const Caps&) { return value("K", p.K); },
    [](const Problem& p, const Caps&) { return p.K > 0; }, "k_zero"};

// What the alignment predicates look at (decode's and prefill_fused's state
// the same condition against their own constants).
std::string operand_addresses(const Problem& p) {
  return "A % 16 = " + std::to_string(p.a_address_mod16) +
         ", B % 16 = " + std::to_string(p.b_address_mod16) +
         ", weight_scale % 4 = " + std::to_string(p.scales_address_mod4);
}

// Decode: the GEMVs' shape and alignment.
constexpr RoutePredicate kMAtMost8{
    "M <= 8", [](const Problem& p, const Caps&) { return value("M", p.M); },
    [](const Problem& p, const Caps&) { return p.M <= 8; }, "m_above_8"};
constexpr RoutePredicate kDecodeBlock16{
    "block_size == 16",
    [](const Problem& p, const Caps&) { return value("block_size", p.block_size); },
    [](const Problem& p, const Caps&) { return p.block_size == 16; }, "decode_block_size_not_16"};
constexpr RoutePredicate kDecodeAligned{
    "A and B 16-byte, weight_scale 4-byte aligned",
    [](const Problem& p, const Caps&) { return operand_addresses(p); },
    [](const Problem& p, const Caps&) {
      return p.a_address_mod16 % kDecodeOperandAlignment == 0 &&
             p.b_address_mod16 % kDecodeOperandAlignment == 0 &&
             p.scales_address_mod4 % kDecodeScalesAlignment == 0;
    },
    "decode_unaligned"};
constexpr RoutePredicate kK128{
    "K % 128 == 0", [](const Problem& p, const Caps&) { return value("K", p.K); },
    [](const Problem& p, const Caps&) { return p.K % 128 == 0; }, "decode_k_not_multiple_of_128"};
constexpr RoutePredicate kSmAtLeast80{
    "sm >= 80", [](const Problem&, const Caps& c) { return value("sm", c.sm); },
    [](const Problem&, const Caps& c) { return c.sm >= kMinMmaSm; }, "decode_sm_below_80"};
constexpr RoutePredicate kDecodeK32{
    "K % 32 == 0", [](const Problem& p, const Caps&) { return value("K", p.K); },
    [](const Problem& p, const Caps&) { return p.K % 32 == 0; }, "decode_k_not_multiple_of_32"};

// native_sm120: the device and its own shape rules. No route stands in for
// it (it is opt-in), so its predicates name no reason code.
constexpr RoutePredicate kSm12x{"sm 12.x",
                                [](const Problem&, const Caps& c) { return value("sm", c.sm); },
                                [](const Problem&, const Caps& c) { return is_sm12x(c); }, nullptr};
constexpr RoutePredicate kNativeFp4{"block-scaled FP4 matmul available", nullptr,
                                    [](const Problem&, const Caps& c) { return c.native_fp4; },
                                    nullptr};
constexpr RoutePredicate kNativeBlock16{
    "block_size == 16",
    [](const Problem& p, const Caps&) { return value("block_size", p.block_size); },
    [](const Problem& p, const Caps&) { return p.block_size == 16; }, nullptr};
constexpr RoutePredicate kNativeK32{
    "K % 32 == 0", [](const Problem& p, const Caps&) { return value("K", p.K); },
    [](const Problem& p, const Caps&) { return p.K % 32 == 0; }, nullptr};
constexpr RoutePredicate kNativeN32{
    "N % 32 == 0", [](const Problem& p, const Caps&) { return value("N", p.N); },
    [](const Problem& p, const Caps&) { return p.N % 32 == 0; }, nullptr};

// prefill_fused: the tensor-core prefill's own needs (its reason codes are
// the ones prefill_vec8 is taken for when they fail, so they are its own
// objects, not the GEMVs', though two state the same condition).
constexpr RoutePredicate kFusedBlock16{
    "block_size == 16",
    [](const Problem& p, const Caps&) { return value("block_size", p.block_size); },
    [](const Problem& p, const Caps&) { return p.block_size == 16; }, "fused_block_size_not_16"};
constexpr RoutePredicate kFusedAligned{
    "A and B 16-byte, weight_scale 4-byte aligned",
    [](const Problem& p, const Caps&) { return operand_addresses(p); },
    [](const Problem& p, const Caps&) {
      return p.a_address_mod16 % kFusedOperandAlignment == 0 &&
             p.b_address_mod16 % kFusedOperandAlignment == 0 &&
             p.scales_address_mod4 % kFusedScalesAlignment == 0;
    },
    "fused_unaligned"};
constexpr RoutePredicate kFusedK128{
    "K % 128 == 0", [](const Problem& p, const Caps&) { return value("K", p.K); },
    [](const Problem& p, const Caps&) { return p.K % 128 == 0; }, "fused_k_not_multiple_of_128"};
// The crossover's values: M, N, K, the device, and where the plan's rounds
// decide, the plan, how its blocks fill their rounds and its K slices.
std::string crossover_values(const Problem& p, const Caps& c) {
  std::string s = value("M", p.M) + ", " + value("N", p.N) + ", " + value("K", p.K) +
                  (c.wgmma ? ", wgmma" : ", no wgmma");
  int64_t values = 0;
  if (p.N > 0 && p.K > 0 && !__builtin_mul_overflow(p.N, p.K, &values)) {
    s += ", N x K = " + std::to_string(values);
  }
  if (!prefill_fused_rounds_decide(p.M, c)) return s;
  const FusedPlan plan = prefill_fused_plan(p.M, p.N, p.K, true);
  const FusedRounds r = prefill_fused_rounds(plan, p.M, p.N, p.K);
  if (r.rounds == 0) return s;
  return s + ", plan " + prefill_fused_variant_name(plan) + ": " + std::to_string(r.blocks) +
         " blocks in " + std::to_string(r.rounds) + " x " + std::to_string(r.slots) + " slots (" +
         std::to_string(100 * r.blocks / (r.rounds * r.slots)) + " %), K slices of " +
         std::to_string(r.k_per_slice);
}

// The crossover with prefill_vec8 (dequant + cuBLAS GEMM), measured on the
// H200 by `nvfp4-harness bench` (msweep group; bf16 with bias, kernel time of
// calls back to back; PERF.md "prefill_fused"). With mma.sync alone, first
// at 11:42 UTC 2026-12-01 and again, with the K-slice sum launched to
// overlap, at 00:35 UTC 2026-12-02 (bench/nvfp4_matmul/results/h200-bench.json):
// prefill_fused is faster at M = 9, 16, 32 and 64 on all three shapes (M =
// 64: 4096x4096 19.0 against 24.2 us, 14336x4096 42.7 against 79.9,
// 4096x14336 40.0 against 82.7); at M = 128 it is slower on 14336x4096 (82.5
// against 80.5) and within 2 % on 4096x4096 (27.8 against 28.4). With the
// wgmma kernel above M = 64 (Caps::wgmma), it was faster at M = 64 to 128 on
// all 25 weight shapes timed, 4096x4096 to 36864x5120 (the calls of
// 2026-12-03 after 07:05 and 07:36 UTC, results/h200-crossover-tail-upto128.json).
// With A's and W's codes brought by the TMA (2026-12-03, the call after
// 21:19 UTC, results/h200-crossover-wtma.json; 24 weight shapes from
// 4096x4096 to 36864x5120 at M = 129, 192, 256, 320, 384, 448, 512, 768 and
// 1024; fused / vec8): faster at M = 129, 192 and 256 on 23 shapes (0.61 to
// 0.96; 4096x4096 at 256: 0.96, 28.3 against 29.4 us), slower on one,
// 12288x4096 (K split over three rounds: 1.02, 0.93, 1.10; with K whole,
// kFusedNoSplitFillPercent, 0.81, 0.75, 0.79 on 2026-12-04,
// results/h200-crossover-nosplit.json); slower at M =
// 320 on 23 of 24 (two blocks over M with 62.5 % of their rows used), mixed
// at 384 (6 of 24 faster); at 448 and 512 faster exactly where the plan's
// blocks fill their rounds to 80 % or more in K slices of 4096 values or
// more (prefill_fused_fills_its_rounds: 13 shapes, 0.79 to 0.95, e.g.
// 14336x4096 at 512 114.6 against 128.9 us) and slower or tied on the other
// 11 (4096x6144, slices of 3072: 0.99 and 1.00). At 384, 768 and 1024 the
// same rule would take 7, 3 and 12 shapes where prefill_fused is slower (up
// to 1.08, 1.05, 1.15), so it holds at 448..512 only.
// Every one of those shapes holds 16 Mi weights or more. On smaller ones
// (2026-12-04, the call after 16:31 UTC, results/h200-crossover-small-weights.json;
// 17 shapes from 896x896 to 4096x4096 at M = 9 to 256) prefill_fused's
// blocks are too few: faster at M = 9 and 16 on all 17 (0.43 to 0.83), at
// M = 32 on all but 896x896 (1.16; 1024x1024 0.89), at M = 64, 96 and 128
// on every shape of 8 Mi weights or more (0.66 to 0.99; 4 Mi: 0.92 to 1.69),
// at M = 160 to 256 on 4096x4096 alone of the 17 (0.75 to 0.96; 12 Mi
// shapes 0.79 to 1.17, 8 Mi 1.01 to 1.31). So the bands (kFusedBands): M
// <= 16 any weights, M <= 32 from 1 Mi, M <= 64 (128 with wgmma) from 8 Mi,
// M <= 256 with wgmma from 16 Mi. M = 17..31 and 33..63 were not measured:
// they take their band's bound.
// With the kernel of 2026-12-06 (the bias loaded before the sum's stores;
// H200, the call after that session's targets round,
// results/h200-crossover24-{1,2}.json: the 24 shapes at M = 640, 768 and
// 1024, two runs) prefill_fused was faster at M = 768 on 11 of 24 and at
// 1024 on 12 of 24: at three and four whole blocks of 256 rows over M, every
// plan filling its rounds to 90 % or more in K slices of 4096 or more won
// (768: 7 shapes, 0.87 to 0.93; 1024: 11 shapes, 0.91 to 0.98), where the
// 80 % rule would also take five losses at 1024 (81 to 86 % full, up to
// 1.09). At 640 (three blocks, 83 % of their rows used) it lost on 19 of 24
// (up to 1.63), and the 90 % rule would take two losses there (16384 x 4096
// 1.02, 36864 x 5120 1.05): M = 640 stays with the GEMM, and so does every
// M not measured between 512 and 2048.
// A prefers, not a need: forcing takes it at any M.
constexpr RoutePredicate kFusedMAtMostCrossover{
    "M <= 16, or M <= 32 with N x K >= 2^20, or M <= 64 (128 with wgmma) with N x K >= 2^23, "
    "or M <= 256 with wgmma and N x K >= 2^24, or 448 <= M <= 512 with wgmma and the plan's "
    "blocks filling their rounds to 80 % in K slices of 4096 or more, or M = 768 or 1024 with "
    "wgmma and the plan's blocks filling their rounds to 90 % in K slices of 4096 or more",
    [](const Problem& p, const Caps& c) { return crossover_values(p, c); },
    [](const Problem& p, const Caps& c) { return prefill_fused_preferred(p.M, p.N, p.K, c); },
    "fused_m_above_crossover"};
static_assert(kFusedBands[0].max_m == 16 && kFusedBands[0].min_weights == 0 &&
                  kFusedBands[1].max_m == 32 && kFusedBands[1].min_weights == 1 << 20 &&
                  kFusedBands[2].max_m == 64 && kFusedBands[2].min_weights == 1 << 23 &&
                  kFusedBands[3].max_m == 128 && kFusedBands[3].min_weights == 1 << 23 &&
                  kFusedBands[4].max_m == 256 && kFusedBands[4].min_weights == 1 << 24 &&
                  std::size(kFusedBands) == 5,
              "kFusedMAtMostCrossover's statement says these bands");
static_assert(kFusedMaxM == 64 && kFusedMaxMWgmma == 256 && kFusedTwoBlocksMinM == 448 &&
                  kFusedTwoBlocksMaxM == 512 && kFusedRoundFillPercent == 80 &&
                  kFusedMinKPerSlice == 4096,
              "kFusedMAtMostCrossover's statement says 64, 256, 448, 512, 80 % and 4096");
static_assert(kFusedFullBlockRows == 256 && kFusedFullBlocksMinM == 768 &&
                  kFusedFullBlocksMaxM == 1024 && kFusedFullBlocksFillPercent == 90,
              "kFusedMAtMostCrossover's statement says M = 768 or 1024 and 90 %");
constexpr RoutePredicate kFusedSm80{
    "sm >= 80", [](const Problem&, const Caps& c) { return value("sm", c.sm); },
    [](const Problem&, const Caps& c) { return c.sm >= kMinMmaSm; }, "fused_sm_below_80"};

// prefill_vec8: byte pairs never straddle a scale, 8-value chunks, aligned vectors.
constexpr RoutePredicate kEvenBlock{
    "block_size even",
    [](const Problem& p, const Caps&) { return value("block_size", p.block_size); },
    [](const Problem& p, const Caps&) { return p.block_size % 2 == 0; }, "odd_block_size"};
constexpr RoutePredicate kK8{
    "K % 8 == 0", [](const Problem& p, const Caps&) { return value("K", p.K); },
    [](const Problem& p, const Caps&) { return p.K % 8 == 0; }, "k_not_multiple_of_8"};
constexpr RoutePredicate kVec8Aligned{
    "B 4-byte and scratch 16-byte aligned",
    [](const Problem& p, const Caps&) {
      return "B % 4 = " + std::to_string(p.b_address_mod16 % 4) +
             ", scratch % 16 = " + std::to_string(p.scratch_address_mod16);
    },
    [](const Problem& p, const Caps&) {
      return p.b_address_mod16 % kVec8CodesAlignment == 0 &&
             p.scratch_address_mod16 % kVec8ScratchAlignment == 0;
    },
    "unaligned"};

// ---------------------------------------------------------------------------
// Each route's needs, in the order they are checked and explained.

constexpr const RoutePredicate* kEmptyNeeds[] = {&kDimsZero};
constexpr const RoutePredicate* kNonEmpty[] = {&kMPositive, &kNPositive, &kKPositive};
constexpr const RoutePredicate* kGemvMmaNeeds[] = {&kMPositive, &kNPositive,     &kKPositive,
                                                   &kMAtMost8,  &kDecodeBlock16, &kDecodeAligned,
                                                   &kK128,      &kSmAtLeast80};
constexpr const RoutePredicate* kGemvScalarNeeds[] = {&kMPositive, &kNPositive,     &kKPositive,
                                                      &kMAtMost8,  &kDecodeBlock16, &kDecodeAligned,
                                                      &kDecodeK32};
constexpr const RoutePredicate* kNativeNeeds[] = {&kMPositive, &kNPositive, &kKPositive,
                                                  &kSm12x,     &kNativeFp4, &kNativeBlock16,
                                                  &kNativeK32, &kNativeN32};
constexpr const RoutePredicate* kFusedNeeds[] = {&kMPositive,    &kNPositive,    &kKPositive,
                                                 &kFusedBlock16, &kFusedAligned, &kFusedK128,
                                                 &kFusedSm80};
constexpr const RoutePredicate* kFusedPrefers[] = {&kFusedMAtMostCrossover};
// What prefill_vec8 stands in for: prefill_fused's needs, then its crossover.
constexpr const RoutePredicate* kFusedChain[] = {
    &kMPositive,    &kNPositive, &kKPositive, &kFusedBlock16,
    &kFusedAligned, &kFusedK128, &kFusedSm80, &kFusedMAtMostCrossover};
constexpr const RoutePredicate* kVec8Needs[] = {&kMPositive, &kNPositive, &kKPositive,
                                                &kEvenBlock, &kK8,        &kVec8Aligned};

const char* gemv_scalar_variant(const Problem& p, const Caps&) {
  switch (gemv_scalar_rows_per_warp(p.N)) {
    case 4:
      return "rows4";
    case 2:
      return "rows2";
    default:
      return "rows1";
  }
}

// gemv_mma's layout: the route's own, or 8 tiles a block over slices of K
// (gemv_mma_slices.cuh).
const char* gemv_mma_variant(const Problem& p, const Caps&) {
  return GemvMmaSlices::variant_name(GemvMmaSlices::slices_for(p.M, p.N, p.K));
}

// prefill_fused's block shape and K slices (prefill_fused_plan.h).
const char* prefill_fused_variant(const Problem& p, const Caps& caps) {
  return prefill_fused_variant_name(prefill_fused_plan(p.M, p.N, p.K, caps.wgmma));
}

// ---------------------------------------------------------------------------
// The table, in dispatch order.

constexpr RouteRow kRows[] = {
    {Route::empty, "empty", kEmptyNeeds, false, nullptr, kNonEmpty,
     [](const Problem&, const Caps&) { return "fill"; }, run_empty_route, false, nullptr, false},
    {Route::gemv_mma,
     "gemv_mma",
     kGemvMmaNeeds,
     false,
     "decode_mma",
     {},
     gemv_mma_variant,
     run_gemv_mma_route,
     false,
     nullptr,
     true},
    {Route::gemv_scalar, "gemv_scalar", kGemvScalarNeeds, false, nullptr, kGemvMmaNeeds,
     gemv_scalar_variant, run_gemv_scalar_route, false, nullptr, true},
    {Route::native_sm120,
     "native_sm120",
     kNativeNeeds,
     true,
     "native_opted_in",
     {},
     [](const Problem&, const Caps&) { return "cublaslt_block_scaled_fp4"; },
     run_native_sm120_route,
     false,
     native_sm120_missing_capability,
     false},
    {Route::prefill_fused,
     "prefill_fused",
     kFusedNeeds,
     false,
     "fused_mma",
     {},
     prefill_fused_variant,
     run_prefill_fused_route,
     false,
     nullptr,
     true,
     kFusedPrefers},
    {Route::prefill_vec8, "prefill_vec8", kVec8Needs, false, nullptr, kFusedChain,
     [](const Problem&, const Caps&) { return "vec8"; }, run_prefill_vec8_route, true, nullptr,
     true},
    {Route::prefill_scalar, "prefill_scalar", kNonEmpty, false, nullptr, kVec8Needs,
     [](const Problem&, const Caps&) { return "scalar"; }, run_prefill_scalar_route, true, nullptr,
     true},
};
constexpr std::size_t kRowCount = sizeof(kRows) / sizeof(kRows[0]);

// One row per Route enumerator, row i for Route i: route_row indexes by it.
constexpr bool rows_follow_the_enum() {
  for (std::size_t i = 0; i < kRowCount; ++i) {
    if (static_cast<std::size_t>(kRows[i].route) != i) return false;
  }
  return kRowCount == kRouteCount;
}
static_assert(rows_follow_the_enum(),
              "kRows must hold one row per Route enumerator, in the enum's order");

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const std::string& s : parts) out += (out.empty() ? "" : separator) + s;
  return out;
}

}  // namespace

std::string RoutePredicate::text(const Problem& p, const Caps& caps) const {
  return values ? std::string(statement) + " (" + values(p, caps) + ")" : std::string(statement);
}

const RoutePredicate* PredicateList::first_failure(const Problem& p, const Caps& caps) const {
  for (const RoutePredicate* predicate : *this) {
    if (!predicate->holds(p, caps)) return predicate;
  }
  return nullptr;
}

const RouteRow* route_table_begin() { return kRows; }
const RouteRow* route_table_end() { return kRows + kRowCount; }

const RouteRow& route_row(Route route) {
  const auto i = static_cast<std::size_t>(route);
  if (i >= kRowCount) {
    throw std::invalid_argument("route_row: route = " + std::to_string(i) +
                                ": no route has this value");
  }
  return kRows[i];
}

std::string native_sm120_missing_capability(const Caps& caps) {
  // The host executor dispatches as an sm_90 device but has no tensor cores of its own.
  if (caps.backend == "host") return "an sm_12x GPU (this is the host executor)";
  if (!is_sm12x(caps)) return "an sm_12x GPU (this device is sm_" + std::to_string(caps.sm) + ")";
  if (!caps.native_fp4) return "cuBLASLt block-scaled FP4 matmul in this build";
  return "";
}

const RoutePredicate* first_unmet(const RouteRow& row, const Problem& p, const Caps& caps) {
  const RoutePredicate* failing = row.needs.first_failure(p, caps);
  return failing ? failing : row.prefers.first_failure(p, caps);
}

std::vector<std::string> reasons_of(const RouteRow& row) {
  if (row.taken_for) return {row.taken_for};
  std::vector<std::string> out;
  for (const RoutePredicate* candidate : row.passed_over) {
    bool own = false;
    for (const RoutePredicate* need : row.needs) own = own || need == candidate;
    for (const RoutePredicate* pref : row.prefers) own = own || pref == candidate;
    if (!own && candidate->miss) out.emplace_back(candidate->miss);
  }
  return out;
}

std::string route_table_text() {
  std::string out;
  for (const RouteRow& row : route_table()) {
    out += row.name + std::string(":");
    for (const std::string& reason : reasons_of(row)) out += " " + reason;
    std::vector<std::string> needs;
    for (const RoutePredicate* p : row.needs) needs.emplace_back(p->statement);
    out += "\n  needs: " + join(needs, "; ") + "\n";
    std::vector<std::string> prefers;
    for (const RoutePredicate* p : row.prefers) prefers.emplace_back(p->statement);
    if (!prefers.empty()) out += "  taken (not forced) only where: " + join(prefers, "; ") + "\n";
    std::vector<std::string> notes;
    if (row.opt_in) notes.emplace_back("opt-in");
    if (row.needs_scratch) notes.emplace_back("dequantizes into a scratch, then a GEMM");
    if (row.cross_checked)
      notes.emplace_back("forced onto every exact case it accepts (reason forced)");
    if (row.missing_capability) notes.emplace_back("hardware-gated where the device lacks it");
    if (!notes.empty()) out += "  " + join(notes, "; ") + "\n";
  }
  return out;
}

}  // namespace nvfp4
