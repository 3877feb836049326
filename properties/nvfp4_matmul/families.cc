#include "properties/nvfp4_matmul/families.h"

#include <algorithm>
#include <climits>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "kernels/nvfp4_matmul/bias_round.cuh"
#include "kernels/nvfp4_matmul/dispatch.h"
#include "kernels/nvfp4_matmul/empty.cuh"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"
#include "kernels/nvfp4_matmul/gemv_mma_slices.cuh"
#include "kernels/nvfp4_matmul/gemv_scalar.cuh"
#include "kernels/nvfp4_matmul/native_sm120.cuh"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "kernels/nvfp4_matmul/prefill_fused.cuh"
#include "kernels/nvfp4_matmul/prefill_fused_plan.h"
#include "kernels/nvfp4_matmul/prefill_fused_shapes.cuh"
#include "kernels/nvfp4_matmul/prefill_scalar.cuh"
#include "kernels/nvfp4_matmul/prefill_vec8.cuh"
#include "kernels/nvfp4_matmul/scale_layout.h"

namespace nvfp4 {
namespace {

// Every random case varies these the same way.
struct Common {
  DType dtype;
  bool bias, exact;
  uint64_t seed;
};

rc::Gen<Common> common() {
  return rc::gen::apply(
      [](DType t, bool bias, bool exact, uint64_t seed) {
        return Common{t, bias, exact, seed};
      },
      rc::gen::element(DType::fp16, DType::bf16), rc::gen::arbitrary<bool>(),
      rc::gen::arbitrary<bool>(), rc::gen::inRange<uint64_t>(1, 1000));
}

template <class F>
rc::Gen<CaseSpec> cases(const std::string& family, F&& build, rc::Gen<std::vector<int64_t>> dims) {
  return rc::gen::apply(
      [family, build](const std::vector<int64_t>& d, const Common& c) {
        CaseSpec s = build(d);
        s.family = family;
        s.dtype = c.dtype;
        s.bias = c.bias;
        s.exact = c.exact;
        s.seed = c.seed;
        return s;
      },
      std::move(dims), common());
}

rc::Gen<std::vector<int64_t>> dims(std::vector<rc::Gen<int64_t>> gens) {
  rc::Gen<std::vector<int64_t>> all = rc::gen::just(std::vector<int64_t>{});
  for (auto& g : gens) {
    all = rc::gen::apply(
        [](std::vector<int64_t> v, int64_t x) {
          v.push_back(x);
          return v;
        },
        all, g);
  }
  return all;
}

rc::Gen<int64_t> in(int64_t lo, int64_t hi_inclusive) {
  return rc::gen::inRange<int64_t>(lo, hi_inclusive + 1);
}
rc::Gen<int64_t> times(int64_t unit, int64_t lo, int64_t hi) {
  return rc::gen::map(in(lo, hi), [unit](int64_t x) { return x * unit; });
}
rc::Gen<int64_t> one_of(std::vector<int64_t> values) { return rc::gen::elementOf(values); }
// Uniform over [lo, hi] whatever RapidCheck's size: for the dimensions that
// decide the route, so a family's route shares do not drift with the size
// (RapidCheck's inRange favours the low end at small sizes). Shrinks towards lo.
rc::Gen<int64_t> uniform(int64_t lo, int64_t hi) {
  std::vector<int64_t> values;
  for (int64_t v = lo; v <= hi; ++v) values.push_back(v);
  return rc::gen::elementOf(values);
}

// ---- the families ----

Family decode() {
  Family f{"decode",
           "M <= 8 meeting the GEMV predicates: gemv_mma (K % 128 == 0) or gemv_scalar",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  for (int64_t K : {32, 96, 128, 160, 256, 384}) {
    for (int64_t M : {1, 8})
      f.examples.push_back(make_case(f.name, M, 17, K, 16, DType::fp16, true, false, 1));
  }
  for (int64_t N : {1, 2, 3, 4, 5, 15, 16, 17})
    f.examples.push_back(make_case(f.name, 3, N, 128, 16, DType::bf16, false, true, 2));
  // Long rows, so that gemv_mma's warps (8 of them splitting K for so few
  // rows) each run past the copies their pipeline issues before it starts:
  // 32 and 32.5 stages of 256 k (the second ends on a half stage).
  for (int64_t K : {8192, 8320})
    f.examples.push_back(make_case(f.name, 2, 17, K, 16, DType::bf16, true, false, 4));
  // A too large for gemv_mma to pre-pair in shared memory (M * (2K + 64) >
  // 36 KB), so it reads A through the L1: whole last stage with 16-byte
  // scale copies, and a half last stage with 4-byte ones.
  f.examples.push_back(make_case(f.name, 8, 17, 2304, 16, DType::bf16, true, false, 5));
  f.examples.push_back(make_case(f.name, 3, 17, 6272, 16, DType::fp16, false, false, 5));
  // gemv_scalar rows longer than 32 scale blocks (K > 512, K % 128 != 0),
  // so each lane takes several and loads the next while it computes one.
  f.examples.push_back(make_case(f.name, 2, 20, 2080, 16, DType::bf16, true, false, 6));
  f.examples.push_back(make_case(f.name, 5, 17, 1056, 16, DType::fp16, false, false, 6));
  // decode_sm_below_80: the scalar GEMV runs anywhere. In exact mode the
  // cross-route check then also forces gemv_mma on the real device.
  Caps sm75;
  sm75.sm = 75;
  for (bool exact : {false, true}) {
    CaseSpec old_gpu = make_case(f.name, 4, 16, 256, 16, DType::fp16, true, exact, 3);
    old_gpu.options.simulated_caps = sm75;
    f.examples.push_back(old_gpu);
  }
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        return make_case("", d[0], d[1], d[2], 16, DType::fp16, false, false, 1);
      },
      dims({in(1, 8), in(1, 96), one_of({32, 64, 96, 128, 160, 192, 224, 256, 384, 512})}));
  f.targets = {{{Route::gemv_mma, Route::gemv_scalar}, 1.0},
               {{Route::gemv_mma}, 0.15},
               {{Route::gemv_scalar}, 0.15}};
  return f;
}

Family decode_miss() {
  Family f{"decode_miss",
           "M <= 8 but block_size != 16 or K % 32 != 0: the GEMV must be skipped",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  for (int64_t bs : {8, 15, 17, 32})
    f.examples.push_back(make_case(f.name, 8, 16, 64, bs, DType::fp16, true, false, 1));
  for (int64_t K : {16, 40, 48, 80, 120})
    f.examples.push_back(make_case(f.name, 1, 16, K, 16, DType::bf16, false, true, 2));
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        // d[3] picks the miss: a block size other than 16, or K an odd multiple of 16 / of 8.
        const bool miss_block = d[3] % 2 == 0;
        const int64_t bs = miss_block ? d[4] : 16;
        const int64_t K = miss_block ? d[2] : (d[5] % 2 ? 16 * (2 * d[5] + 1) : 8 * (2 * d[5] + 1));
        return make_case("", d[0], d[1], K, bs, DType::fp16, false, false, 1);
      },
      dims({in(1, 8), in(1, 64), in(1, 256), uniform(0, 1),
            one_of({2, 4, 7, 8, 15, 17, 24, 32, 64}), in(0, 15)}));
  f.targets = {{{Route::prefill_vec8, Route::prefill_scalar}, 1.0}};
  return f;
}

Family prefill_vec8() {
  Family f{"prefill_vec8",
           "M > 8, K % 8 == 0, even block_size: the vectorized dequant",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  for (int64_t K : {8, 16, 24, 120, 128, 136})
    f.examples.push_back(make_case(f.name, 9, 16, K, 16, DType::fp16, true, false, 1));
  for (int64_t bs : {2, 4, 6, 8, 10, 16, 32, 64})
    f.examples.push_back(make_case(f.name, 16, 5, 64, bs, DType::bf16, false, true, 2));
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        return make_case("", d[0], d[1], d[2], d[3], DType::fp16, false, false, 1);
      },
      dims({in(9, 40), in(1, 64), times(8, 1, 48), times(2, 1, 32)}));
  // block_size 16 with K % 128 == 0 (about 1 case in 128) is prefill_fused's.
  f.targets = {{{Route::prefill_vec8, Route::prefill_fused}, 1.0}, {{Route::prefill_vec8}, 0.9}};
  return f;
}

Family odd_block() {
  Family f{"odd_block",
           "odd block_size: scales split packed bytes and cross 8-value chunks",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  for (int64_t bs : {1, 3, 5, 7, 9, 15, 17, 31})
    f.examples.push_back(make_case(f.name, 9, 7, 64, bs, DType::fp16, true, false, 1));
  f.examples.push_back(make_case(f.name, 4, 7, 45, 15, DType::bf16, false, true, 2));
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        return make_case("", d[0], d[1], d[2], 2 * d[3] + 1, DType::fp16, false, false, 1);
      },
      dims({in(1, 40), in(1, 48), in(1, 300), in(0, 20)}));
  f.targets = {{{Route::prefill_scalar}, 1.0}};
  return f;
}

Family k_tail() {
  Family f{"k_tail",
           "K % 8 != 0, including K < 8 and K < block_size: the scalar dequant's tail",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  for (int64_t K : {1, 2, 7, 9, 15, 17, 33, 127})
    f.examples.push_back(make_case(f.name, 9, 5, K, 16, DType::fp16, true, false, 1));
  f.examples.push_back(make_case(f.name, 2, 5, 13, 64, DType::bf16, false, true, 2));
  // More packed bytes (1100 x 1025) than prefill_scalar's capped grid has
  // threads on the H200 (132 x 32 blocks of 256) or the host executor
  // (8 x 32 blocks): each thread's trips then load their second byte too.
  f.examples.push_back(make_case(f.name, 9, 1100, 2049, 16, DType::bf16, true, false, 3));
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        return make_case("", d[0], d[1], 8 * d[2] + d[3], d[4], DType::fp16, false, false, 1);
      },
      dims({in(1, 40), in(1, 48), in(0, 40), in(1, 7), one_of({2, 4, 8, 16, 32, 64})}));
  f.targets = {{{Route::prefill_scalar}, 1.0}};
  return f;
}

Family partial_scale_block() {
  Family f{"partial_scale_block",
           "K % block_size != 0: the last scale block of each row is short",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  for (int64_t K : {24, 40, 72})
    f.examples.push_back(make_case(f.name, 12, 9, K, 16, DType::fp16, true, false, 1));
  f.examples.push_back(make_case(f.name, 12, 9, 96, 64, DType::bf16, false, true, 2));
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        const int64_t bs = d[3];
        const int64_t K = bs * d[2] + 8 * d[4];  // d[4] in 1..bs/8-1 keeps K % bs != 0
        return make_case("", d[0], d[1], K, bs, DType::fp16, false, false, 1);
      },
      rc::gen::mapcat(one_of({16, 32, 64}), [](int64_t bs) {
        return dims({in(9, 40), in(1, 48), in(0, 6), rc::gen::just(bs), in(1, bs / 8 - 1)});
      }));
  f.targets = {{{Route::prefill_vec8}, 1.0}};
  return f;
}

Family m_boundary() {
  Family f{
      "m_boundary",
      "M at 8 and 9: the decode/prefill boundary the seed's tests never crossed (prefill_fused "
      "above it)",
      {},
      rc::gen::just(CaseSpec{}),
      {}};  // random is set below
  for (int64_t M : {8, 9}) {
    for (int64_t K : {128, 256})
      f.examples.push_back(make_case(f.name, M, 32, K, 16, DType::fp16, true, M == 8, 1));
  }
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        return make_case("", 8 + d[0], d[1], d[2], 16, DType::fp16, false, false, 1);
      },
      dims({uniform(0, 1), in(1, 64), times(128, 1, 3)}));
  f.targets = {{{Route::gemv_mma}, 0.25}, {{Route::prefill_fused}, 0.25}};
  return f;
}

Family n_one() {
  Family f{"n_one",
           "N = 1: one output column (gemv_scalar's rows1, a one-row scratch)",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  for (int64_t M : {1, 8, 9, 33})
    f.examples.push_back(make_case(f.name, M, 1, 96, 16, DType::fp16, true, false, 1));
  f.examples.push_back(make_case(f.name, 4, 1, 256, 16, DType::bf16, false, true, 2));
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        return make_case("", d[0], 1, d[1], 16, DType::fp16, false, false, 1);
      },
      dims({uniform(1, 16), times(32, 1, 8)}));
  f.targets = {{{Route::gemv_mma, Route::gemv_scalar}, 0.25},
               {{Route::prefill_vec8, Route::prefill_fused}, 0.25}};
  return f;
}

Family misaligned() {
  Family f{"misaligned",
           "A, B or scratch off their vector alignment: decode and vec8 must step aside",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  const auto off = [&](int64_t M, uint32_t a, uint32_t b, uint32_t s) {
    CaseSpec c = make_case(f.name, M, 16, 128, 16, DType::fp16, true, false, 1);
    c.a_offset = a;
    c.b_offset = b;
    c.scratch_offset = s;
    return c;
  };
  f.examples = {off(4, 2, 0, 0),  off(4, 0, 4, 0),  off(4, 0, 1, 0),
                off(16, 0, 2, 0), off(16, 0, 0, 8), off(16, 0, 8, 0)};
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        CaseSpec c = make_case("", d[0], d[1], 128, 16, DType::fp16, false, false, 1);
        c.a_offset = static_cast<uint32_t>(2 * d[2]);
        c.b_offset = static_cast<uint32_t>(d[3]);
        c.scratch_offset = static_cast<uint32_t>(2 * d[4]);
        return c;
      },
      dims({uniform(1, 24), in(1, 32), uniform(0, 7), uniform(1, 15), uniform(0, 7)}));
  f.targets = {{{Route::prefill_scalar}, 0.5}};
  return f;
}

Family empty() {
  Family f{"empty",
           "M, N or K is zero: zero-fill plus bias, or nothing",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  f.examples = {make_case(f.name, 0, 8, 32, 16, DType::fp16, true, false, 1),
                make_case(f.name, 4, 0, 32, 16, DType::fp16, true, false, 1),
                make_case(f.name, 4, 8, 0, 16, DType::fp16, true, false, 1),
                make_case(f.name, 4, 8, 0, 16, DType::bf16, false, false, 1)};
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        const int64_t zero = d[3];
        return make_case("", zero == 0 ? 0 : d[0], zero == 1 ? 0 : d[1], zero == 2 ? 0 : d[2], 16,
                         DType::fp16, false, false, 1);
      },
      dims({in(1, 16), in(1, 16), in(1, 64), uniform(0, 2)}));
  f.targets = {{{Route::empty}, 1.0}};
  return f;
}

// ---- value classes (value_class.h, DESIGN.md "Special values") ----

bool is_bias_class(ValueClass c) { return value_class_input(c) == ValueInput::bias; }

CaseSpec value_case(const std::string& family, ValueClass c, int64_t M, int64_t N, int64_t K,
                    DType t, bool bias, uint64_t seed) {
  CaseSpec s = make_case(family, M, N, K, 16, t, bias || is_bias_class(c), true, seed);
  s.value_class = c;
  return s;
}

// How many examples a class gets per dtype: one per value it can take
// (g_pow2_edge: every window end; g_nan: both NaNs), one otherwise.
int value_examples(ValueClass c, DType t) {
  if (c == ValueClass::g_pow2_edge) return static_cast<int>(pow2_edges(t == DType::fp16).size());
  if (c == ValueClass::g_nan) return 2;
  return 1;
}

Family value_class() {
  Family f{"value_class",
           "NaN, infinities, -0, subnormals and extreme weight_scale_2 in every input, every "
           "route, exact mode",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  // M = 3, N = 17, K = 128: gemv_mma takes it (one full and one partial
  // 16-row tile, one 128-k step) and gemv_scalar, prefill_vec8 and
  // prefill_scalar are forced on it by the cross-route check.
  for (DType t : {DType::fp16, DType::bf16}) {
    for (ValueClass c : all_value_classes()) {
      for (int i = 0; i < value_examples(c, t); ++i) {
        f.examples.push_back(
            value_case(f.name, c, 3, 17, 128, t, i % 2 == 0, static_cast<uint64_t>(i)));
      }
      // K = 0: the empty route, where the output is the bias alone.
      if (is_bias_class(c)) f.examples.push_back(value_case(f.name, c, 2, 5, 0, t, true, 1));
    }
  }
  // One row, one column, and eight rows of A (the largest M the GEMVs take).
  for (ValueClass c : {ValueClass::a_neg_zero, ValueClass::a_subnormal, ValueClass::a_inf,
                       ValueClass::scale_nan_ff}) {
    f.examples.push_back(value_case(f.name, c, 1, 1, 128, DType::bf16, false, 3));
    f.examples.push_back(value_case(f.name, c, 8, 32, 256, DType::fp16, true, 3));
  }
  const auto& classes = all_value_classes();
  f.random = rc::gen::apply(
      [name = f.name, classes](std::size_t which, DType t, int64_t M, int64_t N, bool k_zero,
                               bool bias, uint64_t seed) {
        const ValueClass c = classes[which];
        const int64_t K = is_bias_class(c) && k_zero ? 0 : 128;
        return value_case(name, c, M, N, K, t, bias, seed);
      },
      rc::gen::inRange<std::size_t>(0, classes.size()), rc::gen::element(DType::fp16, DType::bf16),
      in(1, 8), in(1, 40), rc::gen::arbitrary<bool>(), rc::gen::arbitrary<bool>(),
      rc::gen::inRange<uint64_t>(1, 1000));
  f.targets = {{{Route::gemv_mma, Route::gemv_scalar, Route::empty}, 1.0}};
  for (ValueClass c : classes) {
    ClassTarget t{c,
                  {Route::gemv_mma, Route::gemv_scalar, Route::prefill_fused, Route::prefill_vec8,
                   Route::prefill_scalar}};
    if (is_bias_class(c)) t.routes.push_back(Route::empty);
    f.class_targets.push_back(t);
  }
  return f;
}

// ---- aims: what the geometry, capability and alignment families prove they reach ----

using AimPredicate = std::function<bool(const CaseSpec&, const CaseVerdict&, const AimContext&)>;
using AimGate = std::function<std::string(const AimContext&)>;

std::string reachable_everywhere(const AimContext&) { return ""; }

// Adds an aim; returns its index for aimed().
std::size_t add_aim(Family& f, std::string claim, AimPredicate reached,
                    AimGate unreachable = reachable_everywhere) {
  f.aims.push_back(Aim{std::move(claim), {}, std::move(reached), std::move(unreachable)});
  return f.aims.size() - 1;
}

// Adds an example to the family, naming it in each of `aims`; an example
// already there (the same name is the same case) is named, not added again.
void aimed(Family& f, CaseSpec spec, std::initializer_list<std::size_t> aims) {
  spec.family = f.name;
  const std::string name = spec.name();
  for (std::size_t a : aims) f.aims.at(a).cases.push_back(name);
  const bool known = std::any_of(f.examples.begin(), f.examples.end(),
                                 [&](const CaseSpec& e) { return e.name() == name; });
  if (!known) f.examples.push_back(std::move(spec));
}

bool took(const CaseVerdict& v, Route r) {
  return v.outcome == Outcome::ok && v.decision.route == r;
}
bool took_reason(const CaseVerdict& v, Route r, const char* reason) {
  return took(v, r) && v.decision.reason == reason;
}

std::string str(int64_t v) { return std::to_string(v); }

// ---- geometry: every launch-geometry cap and loop bound of the kernels ----
//
// Each case is computed from the kernel's own constants and shape(), and its
// aim checks the same shape() for the case as it ran. The caps, by kernel:
//   empty.cuh        EmptyFill: grid.x <= kMaxBlocks (4096) blocks of 256, a grid-stride loop.
//   prefill_vec8.cuh PrefillVec8: grid.y <= kMaxGridRows (65535), kRowsPerThread (16) rows a
//                    thread, the row loop's second trip and its break inside a group; threads
//                    past K / 8 chunks leave.
//   prefill_scalar.cuh PrefillScalar: grid.x <= 32 blocks per multiprocessor (8 x 32 on the
//                    host executor), kBytesPerTrip (2) bytes a trip, a trip without its second
//                    byte; 64-bit indices past 2^30 packed bytes
//                    (kernels/nvfp4_matmul/large_problem_test.cc, GPU only: its scratch alone is 4
//                    GiB).
//   bias_round.cuh   BiasRound: grid.y <= kMaxGridRows (65535) rows; the GPU's GEMM step only
//                    (the host's is its own loop; the body alone past the cap: bias_round_test.cc).
//   gemv_scalar.cuh  rows per warp 4/2/1 by N; lanes taking several 16-value scale blocks
//                    (K > 32 * 16) or none (K < 32 * 16); warps past N in the last block.
//   gemv_mma.cuh     split-K 1/2/4/8 (split_for: stages, or tiles against the target warps);
//                    a half last stage (K % kStageK == kStepK); A pre-paired or through the
//                    L1 (activations_fit); wide or 4-byte scale copies (wide_scales); warps
//                    past the last tile; rows past N in a tile; fragment columns past M.
//   prefill_fused.cuh PrefillFused: its four block shapes, K split across blocks (parts, then
//                    prefill_fused_sum.cuh), a slice ending in a stage shorter than the block's
//                    K warps, more stages than kStages, blocks over M (grid.y; past 65535
//                    tiles only in prefill_fused_test.cc: by shape(), and by launches with the
//                    grid cut so that a block takes two tiles) and over N with rows of W past
//                    N: the prefill_fused family's aims.
//   native_sm120.cuh ActAmaxPartial <= kMaxBlocks (1024) blocks, ActGlobalScale's lanes
//                    folding several partials, ActQuantize and ScaleRetile <= kMaxBlocks
//                    (4096): an sm_12x GPU only (hardware-gated elsewhere).

// Caps that scale with the device's multiprocessors (prefill_scalar's grid,
// gemv_mma's target warps) are crossed by cases sized for the host executor,
// which the launchers count as a small device: sized for an H200 they took
// the host minutes, mostly in the reference. On a GPU whose count needs
// larger cases those aims are reported unreachable, with the size they need.
constexpr int kHostMultiprocessors = 0;  // what the host executor reports
constexpr int64_t kWarpLanes = 32;
constexpr int64_t kGemvBlock = 16;    // the GEMVs' block_size: one E4M3 scale per 16 values
constexpr int64_t kMmaTileRows = 16;  // rows of W in one gemv_mma tile (the mma's m16)

// A pointer in an operand's address class, for the kernels' alignment tests
// (they read only the address; nothing is dereferenced).
template <class T>
T* in_class(uint32_t mod16) {
  return reinterpret_cast<T*>(uintptr_t{256} + mod16);
}

EmptyFill::Params fill_params(const CaseSpec& s) {
  return {nullptr, nullptr, s.M, s.N, half_kind(s.dtype)};
}
DequantParams vec8_params(const CaseSpec& s) {
  return {nullptr,
          nullptr,
          nullptr,
          nullptr,
          s.N,
          s.K,
          s.block_size,
          ceil_div(s.K, s.block_size),
          half_kind(s.dtype)};
}
PrefillScalar::Params scalar_params(const CaseSpec& s, uint32_t scratch_mod16) {
  return PrefillScalar::make_params(nullptr, nullptr, nullptr, in_class<uint16_t>(scratch_mod16),
                                    s.N, s.K, s.block_size, half_kind(s.dtype));
}
GemvMma::Params mma_params(const CaseSpec& s, uint32_t scales_mod16, const AimContext& c) {
  GemvMma::Params p{};
  p.scales = in_class<const uint8_t>(scales_mod16);
  p.M = s.M;
  p.N = s.N;
  p.K = s.K;
  p.kind = half_kind(s.dtype);
  p.split = GemvMma::split_for(s.N, s.K, gemv_mma_target_warps(c.multiprocessors));
  return p;
}

// PrefillScalar's threads (its capped grid) on a device with `multiprocessors`.
int64_t scalar_threads(int multiprocessors) {
  const PrefillScalar::Params huge = PrefillScalar::make_params(
      nullptr, nullptr, nullptr, nullptr, INT32_MAX, 1, 16, nvh::HalfKind::fp16);
  return int64_t{PrefillScalar::shape(huge, multiprocessors).grid.x} *
         PrefillScalar::kMaxBlockThreads;
}

void geometry_empty(Family& f) {
  const int64_t cap = int64_t{EmptyFill::kMaxBlocks} * EmptyFill::kMaxBlockThreads;
  const auto at = add_aim(
      f,
      "EmptyFill at its cap, one output per thread: grid.x == kMaxBlocks (" +
          str(EmptyFill::kMaxBlocks) + "), M * N == kMaxBlocks * kMaxBlockThreads",
      [cap](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        return took(v, Route::empty) &&
               EmptyFill::shape(fill_params(s)).grid.x == EmptyFill::kMaxBlocks && s.M * s.N == cap;
      });
  const auto past = add_aim(
      f, "EmptyFill past its cap: grid.x == kMaxBlocks, M * N > grid.x * block.x, threads loop",
      [](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        const nvh::LaunchShape g = EmptyFill::shape(fill_params(s));
        return took(v, Route::empty) && g.grid.x == EmptyFill::kMaxBlocks &&
               s.M * s.N > int64_t{g.grid.x} * g.block.x;
      });
  aimed(f, make_case("", 4, cap / 4, 0, 16, DType::fp16, true, false, 1), {at});
  aimed(f, make_case("", 3, cap / 3 + 1, 0, 16, DType::bf16, true, false, 2),
        {past});  // bias index wraps rows
}

void geometry_prefill_vec8(Family& f) {
  const int64_t rows = int64_t{PrefillVec8::kMaxGridRows} * PrefillVec8::kRowsPerThread;
  const auto capped = [](const CaseSpec& s, const CaseVerdict& v) {
    return took(v, Route::prefill_vec8) &&
           PrefillVec8::shape(vec8_params(s)).grid.y == PrefillVec8::kMaxGridRows;
  };
  const auto at = add_aim(
      f,
      "PrefillVec8 at its row cap: grid.y == kMaxGridRows (" + str(PrefillVec8::kMaxGridRows) +
          "), N == kMaxGridRows * kRowsPerThread: one whole group a thread",
      [capped, rows](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        return capped(s, v) && s.N == rows;
      });
  const auto past =
      add_aim(f,
              "PrefillVec8 past its row cap: grid.y == kMaxGridRows, N > kMaxGridRows * "
              "kRowsPerThread: the row loop's "
              "second trip, whose group breaks after its first row",
              [capped, rows](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                return capped(s, v) && s.N > rows && s.N <= rows + PrefillVec8::kMaxGridRows;
              });
  // K of one 8-value chunk, M = 1: decode is skipped (K % 32 != 0), so prefill_vec8 runs.
  const int64_t chunk = 8 * PrefillVec8::kWords;
  aimed(f, make_case("", 1, rows, chunk, 16, DType::fp16, false, false, 1), {at});
  aimed(f, make_case("", 1, rows + 1, chunk, 16, DType::bf16, true, false, 2), {past});
}

void geometry_prefill_scalar(Family& f) {
  const auto trips = add_aim(
      f,
      "PrefillScalar at its grid cap (32 blocks per multiprocessor): every thread makes two or "
      "more trips "
      "(N * row_bytes >= 3 * threads) and some trip lacks its second byte (N * row_bytes % (2 * "
      "threads) != 0)",
      [](const CaseSpec& s, const CaseVerdict& v, const AimContext& c) {
        const PrefillScalar::Params p = scalar_params(s, v.addresses.scratch);
        const nvh::LaunchShape g = PrefillScalar::shape(p, c.multiprocessors);
        const int64_t total = p.N * p.row_bytes, threads = int64_t{g.grid.x} * g.block.x;
        return took(v, Route::prefill_scalar) &&
               ceil_div(total, PrefillScalar::kMaxBlockThreads) > g.grid.x &&
               total >= 3 * threads && total % (PrefillScalar::kBytesPerTrip * threads) != 0;
      },
      [](const AimContext& c) -> std::string {
        const int64_t threads = scalar_threads(c.multiprocessors);
        if (threads <= scalar_threads(kHostMultiprocessors)) return "";
        return "sized for the host executor's grid; this device's needs N * row_bytes >= " +
               str(3 * threads);
      });
  // K = 1 (one packed byte a row, K % 8 != 0: prefill_scalar) and 3.5 times
  // the threads of the host executor's capped grid.
  const int64_t threads = scalar_threads(kHostMultiprocessors);
  aimed(f, make_case("", 1, 3 * threads + threads / 2, 1, 16, DType::fp16, true, false, 1),
        {trips});
}

void geometry_bias_round(Family& f) {
  const auto rows = add_aim(
      f,
      "BiasRound past its row cap: the GPU GEMM step adds the bias in BiasRound (K = 1 is too "
      "narrow for the "
      "epilogue's rounding probe) with grid.y == kMaxGridRows (" +
          str(BiasRound::kMaxGridRows) + ") < M",
      [](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        const std::string& variant = v.decision.variant;
        const std::string tail = "bias_round";
        const BiasRound::Params p{nullptr, nullptr, nullptr, s.M, s.N, half_kind(s.dtype)};
        return v.outcome == Outcome::ok && variant.size() >= tail.size() &&
               variant.compare(variant.size() - tail.size(), tail.size(), tail) == 0 &&
               BiasRound::shape(p).grid.y == BiasRound::kMaxGridRows &&
               s.M > BiasRound::kMaxGridRows;
      },
      [](const AimContext& c) -> std::string {
        if (c.kind != nvh::BackendKind::host) return "";
        return "the host executor's GEMM step is host_fp32_loop "
               "(kernels/nvfp4_matmul/gemm_step_host.cc); "
               "BiasRound runs only "
               "in the GPU's";
      });
  aimed(f, make_case("", BiasRound::kMaxGridRows + 1, 2, 1, 16, DType::bf16, true, false, 1),
        {rows});
}

void geometry_gemv_scalar(Family& f) {
  const int64_t lanes_blocks =
      kWarpLanes * kGemvBlock;  // K where every lane has exactly one scale block
  std::size_t rows[5] = {};
  for (int r : {4, 2, 1}) {
    rows[r] =
        add_aim(f, "gemv_scalar with " + str(r) + " rows per warp (gemv_scalar_rows_per_warp(N))",
                [r](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                  return took(v, Route::gemv_scalar) && gemv_scalar_rows_per_warp(s.N) == r &&
                         v.decision.variant == "rows" + str(r);
                });
  }
  const auto blocks = [](const CaseSpec& s) { return s.K / kGemvBlock; };
  const auto several = add_aim(
      f,
      "gemv_scalar lanes take several scale blocks, loading the next while computing one (K > " +
          str(lanes_blocks) + ")",
      [blocks](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        return took(v, Route::gemv_scalar) && blocks(s) > kWarpLanes;
      });
  const auto uneven = add_aim(
      f, "gemv_scalar lanes take unequal numbers of scale blocks (K / 16 > 32, K / 16 % 32 != 0)",
      [blocks](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        return took(v, Route::gemv_scalar) && blocks(s) > kWarpLanes && blocks(s) % kWarpLanes != 0;
      });
  const auto one_each = add_aim(
      f, "gemv_scalar lanes take exactly one scale block each (K == " + str(lanes_blocks) + ")",
      [blocks](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        return took(v, Route::gemv_scalar) && blocks(s) == kWarpLanes;
      });
  const auto idle = add_aim(f,
                            "gemv_scalar lanes past the row's last scale block load nothing (K < " +
                                str(lanes_blocks) + ")",
                            [blocks](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                              return took(v, Route::gemv_scalar) && blocks(s) < kWarpLanes;
                            });
  const auto warps = [](const CaseSpec& s) {
    const int r = gemv_scalar_rows_per_warp(s.N);
    GemvScalar::Params p{};
    p.N = s.N;
    return std::pair<int64_t, int64_t>{
        ceil_div(s.N, r), int64_t{GemvScalar::shape(p, r).grid.x} * GemvScalar::kWarpsPerBlock};
  };
  const auto past = add_aim(
      f, "gemv_scalar warps past N leave (the last block of kWarpsPerBlock warps is not full)",
      [warps](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        const auto [needed, launched] = warps(s);
        return took(v, Route::gemv_scalar) && launched > needed;
      });
  const auto full = add_aim(f, "gemv_scalar blocks all full (warps a multiple of kWarpsPerBlock)",
                            [warps](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                              const auto [needed, launched] = warps(s);
                              return took(v, Route::gemv_scalar) && launched == needed;
                            });
  const int64_t w = GemvScalar::kWarpsPerBlock;
  // K a multiple of 32 but not of 128 (gemv_mma skipped); or K % 128 == 0 on
  // a simulated device below gemv_mma's sm.
  Caps below_mma;
  below_mma.sm = kMinMmaSm - 1;
  const int64_t K_several = lanes_blocks + 2 * kGemvBlock, K_few = 6 * kGemvBlock;
  aimed(f, make_case("", 3, 4 * (2 * w + 1), K_few, 16, DType::fp16, true, true, 1),
        {rows[4], idle, past});
  aimed(f, make_case("", 2, 2 * (2 * w + 1), K_several, 16, DType::bf16, false, false, 2),
        {rows[2], several, uneven, past});
  aimed(f, make_case("", 7, w + 1, K_several, 16, DType::fp16, true, false, 3),
        {rows[1], several, uneven, past});
  CaseSpec exact_lanes = make_case("", 8, 4 * w, lanes_blocks, 16, DType::bf16, true, true, 4);
  exact_lanes.options.simulated_caps = below_mma;
  aimed(f, exact_lanes, {rows[4], one_each, full});
  CaseSpec two_each =
      make_case("", 4, 2 * (2 * w + 1), 2 * lanes_blocks, 16, DType::fp16, false, false, 5);
  two_each.options.simulated_caps = below_mma;
  aimed(f, two_each, {rows[2], several, past});
}

// gemv_mma's sliced layout (gemv_mma_slices.cuh): taken where K is long and
// the route's blocks leave the plan's slots short of a wave, a function of
// M, N and K alone, so the same on every backend.
void geometry_gemv_mma_slices(Family& f) {
  const auto sliced = [](const CaseSpec& s, const CaseVerdict& v) {
    return took(v, Route::gemv_mma) && GemvMmaSlices::slices_for(s.M, s.N, s.K) > 1;
  };
  const auto wide = add_aim(
      f,
      "gemv_mma slices K (slices_for > 1: K of at least kMinStagesToSlice = " +
          str(GemvMmaSlices::kMinStagesToSlice) +
          " stages, the route's blocks short of a wave): 8 tiles a block over slices of K, "
          "parts summed by prefill_fused_sum; 16-byte scale copies",
      [sliced](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        return sliced(s, v) && s.K % GemvMma::kStageK == 0 && v.addresses.weight_scale % 16 == 0;
      });
  const auto half = add_aim(
      f,
      "gemv_mma slices K and the last slice ends in a half stage (K % kStageK == kStepK: 4-byte "
      "scale copies)",
      [sliced](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        return sliced(s, v) && s.K % GemvMma::kStageK == GemvMma::kStepK;
      });
  const auto edges = add_aim(
      f,
      "gemv_mma slices K with warps past the last tile, rows past N and fragment columns past M "
      "(N % 128 != 0, N % 16 != 0, M < 8)",
      [sliced](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        return sliced(s, v) && s.N % (GemvMma::kWarps * kMmaTileRows) != 0 &&
               s.N % kMmaTileRows != 0 && s.M < 8;
      });
  const auto groups = add_aim(f, "gemv_mma slices K over two groups of 8 tiles and more (N > 128)",
                              [sliced](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                                return sliced(s, v) && GemvMmaSlices::groups(s.N) >= 2;
                              });
  const int64_t stage = GemvMma::kStageK, step = GemvMma::kStepK,
                stages = GemvMmaSlices::kMinStagesToSlice;
  aimed(f, make_case("", 3, 40, stages * stage, 16, DType::bf16, true, true, 21), {wide, edges});
  aimed(f, make_case("", 8, 16, stages * stage + step, 16, DType::fp16, false, true, 22), {half});
  aimed(f, make_case("", 1, 144, stages * stage, 16, DType::fp16, true, false, 23), {wide, groups});
}

void geometry_gemv_mma(Family& f) {
  const auto split_is = [](const CaseSpec& s, const CaseVerdict& v, const AimContext& c) {
    return mma_params(s, v.addresses.weight_scale, c).split;
  };
  std::size_t split[GemvMma::kWarps + 1] = {};
  for (uint32_t n = 1; n <= GemvMma::kWarps; n *= 2) {
    split[n] = add_aim(
        f, "gemv_mma split-K " + str(n) + " (split_for, bound by the row's stages, or by kWarps)",
        [n, split_is](const CaseSpec& s, const CaseVerdict& v, const AimContext& c) {
          return took(v, Route::gemv_mma) && split_is(s, v, c) == n &&
                 (n == GemvMma::kWarps || GemvMma::stage_count(s.K) < 2 * int64_t{n});
        });
  }
  const auto by_tiles = add_aim(
      f,
      "gemv_mma split-K bound by the tiles: split_for stops at tiles * split >= the backend's "
      "target warps with "
      "stages to spare",
      [split_is](const CaseSpec& s, const CaseVerdict& v, const AimContext& c) {
        const uint32_t n = split_is(s, v, c);
        return took(v, Route::gemv_mma) && n < GemvMma::kWarps &&
               GemvMma::stage_count(s.K) >= 2 * n &&
               ceil_div(s.N, kMmaTileRows) * n >= gemv_mma_target_warps(c.multiprocessors);
      },
      [](const AimContext& c) -> std::string {
        const int64_t target = gemv_mma_target_warps(c.multiprocessors);
        if (target <= gemv_mma_target_warps(kHostMultiprocessors)) return "";
        return "sized for the host executor's target warps; this device's target of " +
               str(target) + " needs N >= " + str(kMmaTileRows * target);
      });
  const auto half =
      add_aim(f, "gemv_mma's last stage is a half stage (K % kStageK == kStepK)",
              [](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                return took(v, Route::gemv_mma) && s.K % GemvMma::kStageK == GemvMma::kStepK;
              });
  std::size_t prepaired[2] = {}, wide[2] = {};
  for (bool yes : {false, true}) {
    prepaired[yes] =
        add_aim(f,
                std::string("gemv_mma ") +
                    (yes ? "pre-pairs A in shared memory" : "reads A through the L1") +
                    " (activations_fit: M * (2K + 64) <= kMaxPrePairedBytes = " +
                    str(GemvMma::kMaxPrePairedBytes) + (yes ? ")" : " fails)"),
                [yes](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                  return took(v, Route::gemv_mma) && GemvMma::activations_fit(s.M, s.K) == yes;
                });
    wide[yes] =
        add_aim(f,
                std::string("gemv_mma copies scales ") +
                    (yes ? "16 bytes a row (wide_scales)" : "4 bytes a lane (wide_scales fails)"),
                [yes](const CaseSpec& s, const CaseVerdict& v, const AimContext& c) {
                  return took(v, Route::gemv_mma) &&
                         GemvMma::wide_scales(mma_params(s, v.addresses.weight_scale, c)) == yes;
                });
  }
  const auto idle_warps = add_aim(
      f, "gemv_mma warps past the last tile (tiles % (kWarps / split) != 0)",
      [](const CaseSpec& s, const CaseVerdict& v, const AimContext& c) {
        const GemvMma::Params p = mma_params(s, v.addresses.weight_scale, c);
        const int64_t tiles = ceil_div(s.N, kMmaTileRows), per_block = GemvMma::kWarps / p.split;
        return took(v, Route::gemv_mma) && int64_t{GemvMma::shape(p).grid.x} * per_block > tiles;
      });
  const auto rows_past =
      add_aim(f, "gemv_mma's last tile runs past N (N % 16 != 0: its rows copy row N - 1)",
              [](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                return took(v, Route::gemv_mma) && s.N % kMmaTileRows != 0;
              });
  const auto cols_past =
      add_aim(f, "gemv_mma fragment columns past M read row M - 1 and are not stored (M < 8)",
              [](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                return took(v, Route::gemv_mma) && s.M < 8;
              });
  const int64_t stage = GemvMma::kStageK, step = GemvMma::kStepK;
  // The smallest K (in steps; an odd number of steps when `half`) whose A of M rows does not fit to
  // be pre-paired.
  const auto no_fit_K = [step](int64_t M, bool half) {
    int64_t K = step;
    while (GemvMma::activations_fit(M, K) || (K / step % 2 == 1) != half) K += step;
    return K;
  };
  const int64_t tile = kMmaTileRows;
  aimed(f, make_case("", 1, tile, stage, 16, DType::fp16, true, true, 1),
        {split[1], prepaired[1], wide[1], cols_past});
  aimed(f, make_case("", 5, 2 * tile + 8, step, 16, DType::bf16, true, false, 2),
        {split[1], half, wide[0], idle_warps, rows_past, cols_past});
  aimed(f, make_case("", 8, tile, 2 * stage - step, 16, DType::fp16, false, true, 3),
        {split[2], half, wide[0]});
  aimed(f, make_case("", 2, 3 * tile, 4 * stage, 16, DType::bf16, true, false, 4),
        {split[4], wide[1], idle_warps});
  aimed(f, make_case("", 3, tile, 8 * stage, 16, DType::fp16, false, false, 5),
        {split[8], wide[1]});
  aimed(f, make_case("", 4, tile + 4, 16 * stage - step, 16, DType::bf16, true, false, 6),
        {split[8], half, rows_past});
  aimed(f, make_case("", 8, tile, no_fit_K(8, false), 16, DType::bf16, true, false, 7),
        {prepaired[0], wide[1]});
  aimed(f, make_case("", 3, tile, no_fit_K(3, true), 16, DType::fp16, false, false, 8),
        {prepaired[0], half, wide[0]});
  // As many tiles as the host executor's target warps, two stages a row.
  aimed(f,
        make_case("", 1, tile * gemv_mma_target_warps(kHostMultiprocessors), 2 * stage - step, 16,
                  DType::fp16, false, false, 9),
        {by_tiles, half, wide[0]});
  geometry_gemv_mma_slices(f);
}

void geometry_native(Family& f) {
  const AimGate gated = [](const AimContext& c) -> std::string {
    return c.native_missing.empty()
               ? ""
               : "native_sm120 is hardware-gated here: needs " + c.native_missing;
  };
  const auto quant = add_aim(
      f,
      "native_sm120's activation quantizer past its caps: ActAmaxPartial at kMaxBlocks (" +
          str(ActAmaxPartial::kMaxBlocks) +
          ") with M * K past its threads, ActGlobalScale's lanes folding several "
          "partials, ActQuantize at kMaxBlocks (" +
          str(ActQuantize::kMaxBlocks) + ") with M * K / 16 past its threads",
      [](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        const nvh::HalfKind k = half_kind(s.dtype);
        const nvh::LaunchShape amax = ActAmaxPartial::shape({nullptr, s.M * s.K, k, nullptr});
        const nvh::LaunchShape quantize =
            ActQuantize::shape({nullptr, s.M, s.K, k, nullptr, nullptr, nullptr, true});
        return took(v, Route::native_sm120) && amax.grid.x == ActAmaxPartial::kMaxBlocks &&
               s.M * s.K > int64_t{amax.grid.x} * amax.block.x &&
               amax.grid.x > ActGlobalScale::kMaxBlockThreads &&
               quantize.grid.x == ActQuantize::kMaxBlocks &&
               s.M * s.K / kActBlock > int64_t{quantize.grid.x} * quantize.block.x;
      },
      gated);
  const auto retile = add_aim(
      f,
      "native_sm120's ScaleRetile past its cap: kMaxBlocks (" + str(ScaleRetile::kMaxBlocks) +
          ") blocks with the weights' tiled scales past its threads",
      [](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        const ScaleRetile::Params p{nullptr, s.N, s.K / kActBlock, nullptr};
        const nvh::LaunchShape g = ScaleRetile::shape(p);
        return took(v, Route::native_sm120) && g.grid.x == ScaleRetile::kMaxBlocks &&
               tiled_scale_bytes(p.rows, p.cols) > int64_t{g.grid.x} * g.block.x;
      },
      gated);
  Caps native;
  native.sm = kNativeSmFirst;
  native.native_fp4 = true;
  const int64_t K = 4096, quant_threads = ActQuantize::kMaxBlocks * ActQuantize::kMaxBlockThreads;
  CaseSpec big_m =
      make_case("", quant_threads * kActBlock / K + 1, 32, K, 16, DType::bf16, false, false, 1);
  int64_t N = 32;  // the native route's N % 32 == 0
  while (tiled_scale_bytes(N, K / kActBlock) <=
         ScaleRetile::kMaxBlocks * ScaleRetile::kMaxBlockThreads)
    N += 32;
  CaseSpec big_n = make_case("", 9, N, K, 16, DType::fp16, true, false, 2);
  for (CaseSpec* s : {&big_m, &big_n}) {
    s->options.native_opt_in = true;
    s->options.simulated_caps = native;
  }
  aimed(f, big_m, {quant});
  aimed(f, big_n, {retile});
}

Family geometry() {
  Family f{"geometry",
           "every kernel's launch-geometry caps and loop bounds crossed, sizes from the kernels' "
           "shape()",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  geometry_empty(f);
  geometry_prefill_vec8(f);
  geometry_prefill_scalar(f);
  geometry_bias_round(f);
  geometry_gemv_scalar(f);
  geometry_gemv_mma(f);
  geometry_native(f);
  // Random decode geometry (small, cheap): rows per warp, scale blocks per
  // lane, split-K and half stages vary with N and K.
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        return make_case("", d[0], d[1], 32 * d[2], 16, DType::fp16, false, false, 1);
      },
      dims({in(1, 8), in(1, 72), uniform(1, 72)}));
  f.targets = {{{Route::gemv_mma, Route::gemv_scalar}, 1.0},
               {{Route::gemv_mma}, 0.1},
               {{Route::gemv_scalar}, 0.4}};
  return f;
}

// ---- capability: every threshold the dispatcher tests on the device ----

Caps simulated(int sm, bool native_fp4) {
  Caps c;
  c.sm = sm;
  c.native_fp4 = native_fp4;
  return c;
}

bool native_passed_over_for(const CaseVerdict& v, const char* predicate) {
  // K = 64: prefill_fused (K % 128 == 0) steps aside too.
  return took_reason(v, Route::prefill_vec8, "fused_k_not_multiple_of_128") &&
         v.decision.detail.find(std::string("native_sm120 opted in but passed over: ") +
                                predicate) != std::string::npos;
}

Family capability() {
  Family f{"capability",
           "each capability the dispatcher tests, simulated at its threshold and one past",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  const auto at_sm = [](const CaseSpec& s, int sm) {
    return s.options.simulated_caps && s.options.simulated_caps->sm == sm;
  };
  const auto mma =
      add_aim(f, "sm == kMinMmaSm (" + str(kMinMmaSm) + "): gemv_mma for decode_mma",
              [at_sm](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                return at_sm(s, kMinMmaSm) && took_reason(v, Route::gemv_mma, "decode_mma");
              });
  const auto below_mma = add_aim(
      f, "sm == kMinMmaSm - 1: gemv_scalar for decode_sm_below_80",
      [at_sm](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        return at_sm(s, kMinMmaSm - 1) && took_reason(v, Route::gemv_scalar, "decode_sm_below_80");
      });
  // The dispatcher's choice of native_sm120, which runs where the device has it and is
  // NOT_SUPPORTED elsewhere.
  const auto native_at = [at_sm](int sm) {
    return [at_sm, sm](const CaseSpec& s, const CaseVerdict& v, const AimContext& c) {
      const bool ran =
          c.native_missing.empty() ? v.outcome == Outcome::ok : v.outcome == Outcome::not_supported;
      return at_sm(s, sm) && s.options.simulated_caps->native_fp4 && ran &&
             v.decision.route == Route::native_sm120 && v.decision.reason == "native_opted_in";
    };
  };
  const auto first = add_aim(f,
                             "sm == kNativeSmFirst (" + str(kNativeSmFirst) +
                                 ") with native FP4, opted in: native_sm120 for native_opted_in",
                             native_at(kNativeSmFirst));
  const auto last = add_aim(f,
                            "sm == kNativeSmEnd - 1 (" + str(kNativeSmEnd - 1) +
                                ") with native FP4, opted in: native_sm120 for native_opted_in",
                            native_at(kNativeSmEnd - 1));
  const auto passed_over = [at_sm](int sm, bool fp4, const char* predicate) {
    return [at_sm, sm, fp4, predicate](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
      return at_sm(s, sm) && s.options.simulated_caps->native_fp4 == fp4 &&
             native_passed_over_for(v, predicate);
    };
  };
  const auto before = add_aim(f,
                              "sm == kNativeSmFirst - 1 with native FP4, opted in: passed over (sm "
                              "12.x fails), prefill_vec8",
                              passed_over(kNativeSmFirst - 1, true, "sm 12.x"));
  const auto after =
      add_aim(f,
              "sm == kNativeSmEnd (" + str(kNativeSmEnd) +
                  ") with native FP4, opted in: passed over (sm 12.x fails), prefill_vec8",
              passed_over(kNativeSmEnd, true, "sm 12.x"));
  const auto no_fp4 =
      add_aim(f,
              "sm == kNativeSmFirst without native FP4, opted in: passed over (block-scaled FP4 "
              "matmul available fails), prefill_vec8",
              passed_over(kNativeSmFirst, false, "block-scaled FP4 matmul available"));

  for (int sm : {kMinMmaSm, kMinMmaSm - 1}) {
    CaseSpec c = make_case("", 4, 16, 256, 16, DType::fp16, true, true, 1);
    c.options.simulated_caps = simulated(sm, false);
    aimed(f, c, {sm == kMinMmaSm ? mma : below_mma});
  }
  // prefill_fused's mma.sync: the same threshold for M > 8.
  const auto fused =
      add_aim(f, "sm == kMinMmaSm, M > 8: prefill_fused for fused_mma",
              [at_sm](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                return at_sm(s, kMinMmaSm) && took_reason(v, Route::prefill_fused, "fused_mma");
              });
  const auto below_fused = add_aim(
      f, "sm == kMinMmaSm - 1, M > 8: prefill_vec8 for fused_sm_below_80",
      [at_sm](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        return at_sm(s, kMinMmaSm - 1) && took_reason(v, Route::prefill_vec8, "fused_sm_below_80");
      });
  for (int sm : {kMinMmaSm, kMinMmaSm - 1}) {
    CaseSpec c = make_case("", 16, 24, 256, 16, DType::bf16, true, true, 3);
    c.options.simulated_caps = simulated(sm, false);
    aimed(f, c, {sm == kMinMmaSm ? fused : below_fused});
  }
  const struct {
    int sm;
    bool fp4;
    std::size_t aim;
  } native_cases[] = {{kNativeSmFirst - 1, true, before},
                      {kNativeSmFirst, true, first},
                      {kNativeSmEnd - 1, true, last},
                      {kNativeSmEnd, true, after},
                      {kNativeSmFirst, false, no_fp4}};
  for (const auto& n : native_cases) {
    CaseSpec c = make_case("", 16, 32, 64, 16, DType::bf16, true, false, 2);
    c.options.native_opt_in = true;
    c.options.simulated_caps = simulated(n.sm, n.fp4);
    aimed(f, c, {n.aim});
  }
  // Random: sm at and around each threshold, native FP4 and the opt-in
  // either way, except that native_sm120 is never chosen (it runs on an
  // sm_12x GPU only; the examples above take it).
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        const int sm = static_cast<int>(d[3]);
        const bool sm12x = sm >= kNativeSmFirst && sm < kNativeSmEnd;
        CaseSpec c = make_case("", d[0], d[1], d[2], 16, DType::fp16, false, false, 1);
        c.options.simulated_caps = simulated(sm, d[4] == 1 && !sm12x);
        c.options.native_opt_in = d[5] == 1;
        return c;
      },
      dims({uniform(1, 12), in(1, 64), one_of({64, 96, 128, 160, 256, 512}),
            one_of({kMinMmaSm - 2, kMinMmaSm - 1, kMinMmaSm, kMinMmaSm + 1, kNativeSmFirst - 1,
                    kNativeSmFirst, kNativeSmEnd - 1, kNativeSmEnd, kNativeSmEnd + 1}),
            uniform(0, 1), uniform(0, 1)}));
  // The draws above give each route a fixed chance per random case: M > 8
  // is 1/3; then sm < 80 (2 of the 9 sm) or K % 128 != 0 (3 of the 6 K)
  // takes prefill_vec8 (p = 0.20), else prefill_fused (p = 0.13); M <= 8
  // likewise gemv_scalar (0.41) or gemv_mma (0.26). 120 seeds of 100 cases
  // drew 10-32 for prefill_vec8 and 80 drew 5-15 for prefill_fused. Each
  // share is set where 100 cases fall short of it less than once in 10^4
  // runs (binomial tails: gemv_mma 2e-5, gemv_scalar 6e-9, prefill_vec8
  // 2e-6, prefill_fused 1e-5); at 10 % and 5 % the last two fell short
  // about once in 600 and 400 runs (seed 3654420842 drew 9 for
  // prefill_vec8 in a CI run), a failure no code change made.
  f.targets = {{{Route::gemv_mma}, 0.1},
               {{Route::gemv_scalar}, 0.15},
               {{Route::prefill_vec8}, 0.05},
               {{Route::prefill_fused}, 0.02}};
  return f;
}

// ---- alignment: every operand through every alignment class its type allows ----

struct Operand {
  const char* name;
  uint32_t step;  // the element size: offsets 0, step, 2 * step, ... below 16
  uint32_t CaseSpec::*offset;
  uint32_t AddressClasses::*address;
};

const Operand kOperands[] = {
    {"A", 2, &CaseSpec::a_offset, &AddressClasses::A},
    {"B", 1, &CaseSpec::b_offset, &AddressClasses::B},
    {"weight_scale", 1, &CaseSpec::scales_offset, &AddressClasses::weight_scale},
    {"weight_scale_2", 4, &CaseSpec::scale2_offset, &AddressClasses::weight_scale_2},
    {"bias", 2, &CaseSpec::bias_offset, &AddressClasses::bias},
    {"Y", 2, &CaseSpec::y_offset, &AddressClasses::Y},
    {"scratch", 2, &CaseSpec::scratch_offset, &AddressClasses::scratch},
};

// What the dispatcher and kernels do with an operand at an address class.
struct ClassOutcome {
  std::string says;
  std::function<bool(const CaseSpec&, const CaseVerdict&, const AimContext&)> holds;
};

ClassOutcome class_outcome(const std::string& operand, uint32_t c) {
  const auto route = [](Route r, const char* reason) {
    return [r, reason](const CaseSpec&, const CaseVerdict& v, const AimContext&) {
      return took_reason(v, r, reason);
    };
  };
  if (operand == "A") {
    if (c % kDecodeOperandAlignment == 0)
      return {"the decode GEMV runs", route(Route::gemv_mma, "decode_mma")};
    return {"decode and prefill_fused step aside (fused_unaligned)",
            route(Route::prefill_vec8, "fused_unaligned")};
  }
  if (operand == "B") {
    if (c % kDecodeOperandAlignment == 0)
      return {"the decode GEMV runs", route(Route::gemv_mma, "decode_mma")};
    if (c % kVec8CodesAlignment == 0)
      return {"decode and prefill_fused step aside, prefill_vec8 runs",
              route(Route::prefill_vec8, "fused_unaligned")};
    return {"decode and prefill_vec8 step aside (unaligned)",
            route(Route::prefill_scalar, "unaligned")};
  }
  if (operand == "weight_scale") {
    if (c % kDecodeScalesAlignment != 0)
      return {"decode and prefill_fused step aside (fused_unaligned)",
              route(Route::prefill_vec8, "fused_unaligned")};
    const bool wide = c % 16 == 0;
    return {
        std::string("gemv_mma runs with ") + (wide ? "wide (16-byte)" : "4-byte") + " scale copies",
        [wide](const CaseSpec& s, const CaseVerdict& v, const AimContext& ctx) {
          return took_reason(v, Route::gemv_mma, "decode_mma") &&
                 GemvMma::wide_scales(mma_params(s, v.addresses.weight_scale, ctx)) == wide;
        }};
  }
  if (operand == "scratch") {
    if (c % kVec8ScratchAlignment == 0)
      return {"prefill_vec8 runs", route(Route::prefill_vec8, "fused_k_not_multiple_of_128")};
    const bool paired = c % 4 == 0;
    return {std::string("prefill_scalar runs (unaligned), ") +
                (paired ? "storing byte pairs as one word" : "storing halves one by one"),
            [paired](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
              return took_reason(v, Route::prefill_scalar, "unaligned") &&
                     PrefillScalar::paired(scalar_params(s, v.addresses.scratch)) == paired;
            }};
  }
  return {"", nullptr};  // weight_scale_2, bias, Y: no route tests them; every route must read or
                         // write them there
}

// The case each routing operand's classes run on: one every route's test sees.
CaseSpec routing_case(const std::string& operand) {
  // K % 128 != 0: prefill_fused (which has no scratch) steps aside.
  if (operand == "scratch") return make_case("", 16, 16, 136, 16, DType::fp16, true, false, 1);
  return make_case("", 4, 16, 256, 16, DType::fp16, true, false,
                   1);  // gemv_mma when aligned, K % 256 == 0
}

// The routes weight_scale_2, bias and Y are walked through, each on a case that takes it.
struct RouteCase {
  Route route;
  CaseSpec spec;
};
std::vector<RouteCase> route_cases() {
  return {{Route::gemv_mma, make_case("", 4, 16, 256, 16, DType::bf16, true, true, 2)},
          {Route::gemv_scalar, make_case("", 3, 18, 96, 16, DType::fp16, true, false, 3)},
          {Route::prefill_fused, make_case("", 12, 16, 256, 16, DType::bf16, true, false, 7)},
          {Route::prefill_vec8, make_case("", 12, 16, 136, 16, DType::bf16, true, false, 4)},
          {Route::prefill_scalar, make_case("", 12, 16, 100, 16, DType::fp16, true, false, 5)},
          {Route::empty, make_case("", 3, 16, 0, 16, DType::bf16, true, false, 6)}};
}

Family alignment() {
  Family f{"alignment",
           "every operand offset through every alignment class of its type, modulo 16",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  for (const Operand& o : kOperands) {
    const std::string name = o.name;
    for (uint32_t c = 0; c < 16; c += o.step) {
      uint32_t CaseSpec::*offset = o.offset;
      uint32_t AddressClasses::*address = o.address;
      const ClassOutcome outcome = class_outcome(name, c);
      if (outcome.holds) {
        const auto aim =
            add_aim(f, name + " at " + str(c) + " mod 16: " + outcome.says,
                    [address, c, holds = outcome.holds](const CaseSpec& s, const CaseVerdict& v,
                                                        const AimContext& ctx) {
                      return v.addresses.*address == c && holds(s, v, ctx);
                    });
        CaseSpec spec = routing_case(name);
        spec.*offset = c;
        aimed(f, spec, {aim});
        continue;
      }
      for (const RouteCase& rc : route_cases()) {
        if (name == "weight_scale_2" && rc.route == Route::empty)
          continue;  // EmptyFill does not read it
        const Route r = rc.route;
        const auto aim =
            add_aim(f, name + " at " + str(c) + " mod 16 on " + route_name(r),
                    [address, c, r](const CaseSpec&, const CaseVerdict& v, const AimContext&) {
                      return v.addresses.*address == c && took(v, r);
                    });
        CaseSpec spec = rc.spec;
        spec.*offset = c;
        aimed(f, spec, {aim});
      }
    }
  }
  // Random: every operand at once, each aligned half the time and in a
  // random class of its type otherwise.
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        CaseSpec c = make_case("", d[0], d[1], d[2], 16, DType::fp16, false, false, 1);
        for (std::size_t i = 0; i < std::size(kOperands); ++i) {
          const Operand& o = kOperands[i];
          const int64_t classes = 16 / o.step, pick = d[3 + i];
          c.*(o.offset) = pick < classes ? static_cast<uint32_t>(pick * o.step) : 0;
        }
        return c;
      },
      dims({uniform(1, 16), in(1, 48), one_of({96, 100, 128, 256}), uniform(0, 15), uniform(0, 31),
            uniform(0, 31), uniform(0, 7), uniform(0, 15), uniform(0, 15), uniform(0, 15)}));
  f.targets = {{{Route::prefill_scalar}, 0.2}, {{Route::prefill_vec8}, 0.05}};
  return f;
}

// ---- prefill_fused and the routes that stand in for it ----

// What the families need of prefill_fused's block shapes (prefill_fused.cuh).
struct FusedFacts {
  int64_t rows, cols, k_warps, stages;
};
FusedFacts fused_facts(FusedShape shape) {
  return with_fused_shape(shape, [](auto tag) {
    using F = typename decltype(tag)::type;
    return FusedFacts{F::kTileRows, F::kTileCols, F::kKWarps, F::kStages};
  });
}
// The plan prefill_fused ran, read back from the variant it logged
// ("w128n128/k4"; "gemv16/slices3" for the GEMV-shaped path): what ran,
// whichever caps the plan was made with (prefill_fused_plan.h).
FusedPlan fused_plan(const CaseVerdict& v) {
  if (v.decision.variant.rfind("gemv", 0) == 0) return {FusedShape::m16n64, 1, 2};
  for (FusedShape shape : {FusedShape::m16n64, FusedShape::m32n128, FusedShape::m64n128,
                           FusedShape::m128n128, FusedShape::w128n128, FusedShape::w256n128}) {
    for (int32_t k = 1; k <= kFusedMaxKSlices; ++k) {
      if (v.decision.variant == prefill_fused_variant_name({shape, k})) return {shape, k};
      const FusedPlan cluster{shape, k, 1, 0, 1, true};  // the slices meet in a cluster
      if (v.decision.variant == prefill_fused_variant_name(cluster)) return cluster;
    }
  }
  return {FusedShape::m16n64, 0};  // no plan: not prefill_fused's variant
}
// prefill_fused ran its own kernel (not the GEMV-shaped path of its plan).
bool took_fused_kernel(const CaseVerdict& v) {
  return took(v, Route::prefill_fused) && fused_plan(v).gemv_slices == 1 &&
         fused_plan(v).k_slices > 0;
}
FusedFacts fused_facts(const CaseVerdict& v) { return fused_facts(fused_plan(v).shape); }

// Aims for what the fused kernel's own sizes decide (prefill_fused.cuh,
// prefill_fused_plan.h): each block shape, K split across blocks, a stage
// of fewer steps than the block's K warps, more stages than its pipeline
// holds, several blocks over M and over N, rows of W past N in the last
// block, and M at the crossover.
// w128n128 needs a device with wgmma (the host executor has it); elsewhere
// its cases run the mma.sync plan, which meets the aim there.
std::size_t fused_shape_aim(Family& f, FusedShape shape) {
  const FusedFacts facts = fused_facts(shape);
  const FusedPlan plan{shape, 1};
  const bool wgmma = is_wgmma_shape(shape);
  return add_aim(f,
                 std::string("prefill_fused in blocks of shape ") +
                     prefill_fused_variant_name(plan) + " (" + str(facts.k_warps) + " K warps, " +
                     str(facts.stages) + " stages)" + (wgmma ? ", where the device has wgmma" : ""),
                 [shape, wgmma](const CaseSpec&, const CaseVerdict& v, const AimContext& c) {
                   if (wgmma && !c.wgmma) return took_fused_kernel(v);
                   return took_fused_kernel(v) && fused_plan(v).shape == shape;
                 });
}

// Caps that decide as an sm_90 device without wgmma, so that prefill_fused
// runs its mma.sync shapes above M = 64 on every backend.
Caps without_wgmma() {
  Caps c;
  c.sm = 90;
  return c;
}
Caps with_wgmma() { return h200_caps("host"); }

// The case forced onto prefill_fused where the chain would pass it over
// for its weights' size (kFusedBands): the family runs the fused kernels on
// weights small enough for the host executor, and the chain takes
// prefill_fused on such weights only up to M = 16.
CaseSpec fused_anyway(CaseSpec c) {
  const Caps caps = c.options.simulated_caps ? *c.options.simulated_caps : with_wgmma();
  if (!prefill_fused_preferred(c.M, c.N, c.K, caps)) c.options.force_route = Route::prefill_fused;
  return c;
}

// The steps of K the largest slice holds.
int64_t fused_slice_steps(const CaseSpec& s, const CaseVerdict& v) {
  const int64_t slices = fused_plan(v).k_slices;
  return (s.K / 128 + slices - 1) / slices;
}

Family prefill_fused() {
  Family f{"prefill_fused",
           "M > 8, block_size 16, K % 128 == 0, aligned, M up to the crossover: the GEMM that "
           "dequantizes on chip",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  const std::size_t blocks[6] = {
      fused_shape_aim(f, FusedShape::m16n64),   fused_shape_aim(f, FusedShape::m32n128),
      fused_shape_aim(f, FusedShape::m64n128),  fused_shape_aim(f, FusedShape::m128n128),
      fused_shape_aim(f, FusedShape::w128n128), fused_shape_aim(f, FusedShape::w256n128)};
  const auto split = add_aim(
      f, "prefill_fused splits K across blocks: parts, then prefill_fused_sum",
      [](const CaseSpec&, const CaseVerdict& v, const AimContext&) {
        return took_fused_kernel(v) && fused_plan(v).k_slices > 1 && !fused_plan(v).cluster_sum;
      });
  // Without wgmma the case runs an mma.sync split, which meets the aim there.
  const auto cluster = add_aim(
      f,
      "prefill_fused's K slices meet in a thread-block cluster (w256n128/k2-cluster: no parts, "
      "no prefill_fused_sum), where the device has wgmma",
      [](const CaseSpec&, const CaseVerdict& v, const AimContext& c) {
        if (!c.wgmma) return took_fused_kernel(v) && fused_plan(v).k_slices > 1;
        return took_fused_kernel(v) && fused_plan(v).cluster_sum;
      });
  const auto short_stage = add_aim(
      f, "prefill_fused's slice ends in a stage of fewer 128-k steps than its K warps",
      [](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        return took_fused_kernel(v) && fused_slice_steps(s, v) % fused_facts(v).k_warps != 0;
      });
  const auto deep =
      add_aim(f, "prefill_fused streams more stages than its pipeline holds (kStages)",
              [](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                const FusedFacts facts = fused_facts(v);
                return took_fused_kernel(v) &&
                       (fused_slice_steps(s, v) + facts.k_warps - 1) / facts.k_warps > facts.stages;
              });
  const auto m_blocks = add_aim(f, "prefill_fused with more than one block over M",
                                [](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                                  return took_fused_kernel(v) && s.M > fused_facts(v).rows;
                                });
  const auto n_past =
      add_aim(f, "prefill_fused with several blocks over N, the last holding rows of W past N",
              [](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                const int64_t cols = fused_facts(v).cols;
                return took_fused_kernel(v) && s.N > cols && s.N % cols != 0;
              });
  // The executed side of the crossover (kFusedBands): M = 16 on the least
  // weights, and M = 32 on 2^20 of them (8192 x 128); the bands on larger
  // weights are decided in dispatch_test and timed on the GPU (crossover_test).
  const auto crossover = add_aim(
      f, "M == 16, the last M on weights of any size: prefill_fused for fused_mma",
      [](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        return s.M == kFusedBands[0].max_m && took_reason(v, Route::prefill_fused, "fused_mma");
      });
  const auto crossover_weights =
      add_aim(f, "M == 32 on N x K == 2^20: prefill_fused for fused_mma",
              [](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                return s.M == kFusedBands[1].max_m && s.N * s.K == kFusedBands[1].min_weights &&
                       took_reason(v, Route::prefill_fused, "fused_mma");
              });
  // Past the crossover the chain takes prefill_vec8, so the block shapes are
  // forced (the crossover is a preference, not a need); above M = 64 with
  // caps without wgmma, so that the mma.sync shapes run there.
  const auto force = [](CaseSpec c) {
    if (c.M > kFusedMaxM) c.options.simulated_caps = without_wgmma();
    return fused_anyway(c);
  };
  aimed(f, make_case("", 9, 32, 128, 16, DType::fp16, true, false, 1), {blocks[0], short_stage});
  aimed(f, make_case("", 16, 65, 640, 16, DType::bf16, false, true, 2),
        {blocks[0], split, short_stage, n_past});
  aimed(f, make_case("", 13, 20, 2560, 16, DType::fp16, true, false, 2), {blocks[0], split});
  aimed(f, force(make_case("", 17, 31, 1024, 16, DType::fp16, true, true, 3)), {blocks[1], split});
  aimed(f, force(make_case("", 32, 130, 1152, 16, DType::bf16, true, false, 4)),
        {blocks[1], split, short_stage, n_past});
  aimed(f, force(make_case("", 33, 65, 256, 16, DType::fp16, false, false, 5)), {blocks[2]});
  aimed(f, force(make_case("", 64, 7, 2304, 16, DType::bf16, true, true, 6)),
        {blocks[2], split, short_stage});
  aimed(f, force(make_case("", 65, 130, 512, 16, DType::fp16, true, true, 7)),
        {blocks[2], m_blocks, n_past});
  aimed(f, force(make_case("", 130, 136, 1024, 16, DType::fp16, true, true, 7)),
        {blocks[3], deep, n_past});
  aimed(f, force(make_case("", 129, 16, 1280, 16, DType::bf16, false, false, 8)),
        {blocks[3], split, m_blocks});
  aimed(f, force(make_case("", 40, 8, 128, 16, DType::fp16, true, true, 9)), {blocks[2]});
  aimed(f, make_case("", 16, 8, 128, 16, DType::fp16, true, true, 9), {crossover});
  aimed(f, make_case("", 32, 8192, 128, 16, DType::bf16, false, true, 17), {crossover_weights});
  // w128n128 (prefill_fused_wgmma.cuh): half a tile of A, two blocks over N the
  // last of 2 rows, K split; an odd stage count in slices. w256n128 (its two
  // tiles of A, forced past the crossover): rows past M in the second tile
  // and more stages than its pipeline holds; two blocks over M.
  aimed(f, fused_anyway(make_case("", 65, 130, 1280, 16, DType::bf16, true, false, 12)),
        {blocks[4], n_past, split});
  aimed(f, fused_anyway(make_case("", 128, 64, 1792, 16, DType::fp16, false, true, 13)),
        {blocks[4], split});
  {
    CaseSpec c = make_case("", 130, 136, 1024, 16, DType::bf16, false, true, 14);
    c.options.force_route = Route::prefill_fused;
    aimed(f, c, {blocks[5], deep, n_past});
  }
  {
    CaseSpec c = make_case("", 300, 136, 768, 16, DType::fp16, true, false, 16);
    c.options.force_route = Route::prefill_fused;
    aimed(f, c, {blocks[5], deep, n_past, m_blocks});
  }
  // W prepacked once for the wgmma kernel (prefill_fused_prepack.cuh): one
  // tile of A and two, exact mode and the contract path (the kernels' tests
  // run it in every plan kind, against the contract order's bits). Without wgmma the mma.sync
  // shapes read B and the case meets the aim by running the fused kernel.
  const auto prepacked =
      add_aim(f,
              "prefill_fused's wgmma kernel reads W prepacked once (prepack_for_fused, "
              "MatmulArgs::prepacked_B), where the device has wgmma",
              [](const CaseSpec& s, const CaseVerdict& v, const AimContext& c) {
                return s.prepacked && took_fused_kernel(v) &&
                       (!c.wgmma || is_wgmma_shape(fused_plan(v).shape));
              });
  {
    CaseSpec c = fused_anyway(make_case("", 100, 136, 640, 16, DType::bf16, true, true, 18));
    c.prepacked = true;
    aimed(f, c, {blocks[4], prepacked});
    c = make_case("", 129, 16, 1280, 16, DType::fp16, false, true, 20);  // one row in tile two
    c.options.force_route = Route::prefill_fused;
    aimed(f, c, {blocks[5], cluster});
    c.prepacked = true;
    c.exact = false;
    aimed(f, c, {blocks[5], cluster, prepacked});
    c = make_case("", 200, 136, 768, 16, DType::fp16, false, false, 19);
    c.options.force_route = Route::prefill_fused;
    c.prepacked = true;
    aimed(f, c, {blocks[5], n_past, prepacked});
  }
  // The GEMV-shaped path (gemv_mma_slices.cuh, two groups of A's rows).
  const auto gemv = [](const CaseSpec&, const CaseVerdict& v) {
    return took(v, Route::prefill_fused) && fused_plan(v).gemv_slices > 1;
  };
  const auto gemv_one_row = add_aim(
      f,
      "prefill_fused's GEMV-shaped path (8 < M <= kMaxFusedM = " +
          str(GemvMmaSlices16::kMaxFusedM) +
          ", slices_for > 1): M = 9, one row in the second group; N past a block of 8 tiles, "
          "rows past N",
      [gemv](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
        return gemv(s, v) && s.M == 9 && s.N > 128 && s.N % 16 != 0;
      });
  const auto gemv_full =
      add_aim(f, "prefill_fused's GEMV-shaped path at M == kMaxFusedM with a last half stage",
              [gemv](const CaseSpec& s, const CaseVerdict& v, const AimContext&) {
                return gemv(s, v) && s.M == GemvMmaSlices16::kMaxFusedM && s.K % 256 == 128;
              });
  aimed(f, make_case("", 9, 136, 2048, 16, DType::bf16, true, true, 10), {gemv_one_row});
  aimed(
      f,
      make_case("", GemvMmaSlices16::kMaxFusedM, 24, 2048 + 128, 16, DType::fp16, false, false, 11),
      {gemv_full});
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        return fused_anyway(
            make_case("", d[0], d[1], 128 * d[2], 16, DType::fp16, false, false, 1));
      },
      dims({uniform(9, kFusedMaxM), in(1, 72), uniform(1, 10)}));
  f.targets = {{{Route::prefill_fused}, 1.0}};
  return f;
}

Family fused_miss() {
  Family f{"fused_miss",
           "M > 8 where one of prefill_fused's needs fails: prefill_vec8 (or prefill_scalar) "
           "stands in, naming it",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  const auto reason_aim = [&f](const char* reason) {
    return add_aim(f, std::string("prefill_vec8 for ") + reason,
                   [reason](const CaseSpec&, const CaseVerdict& v, const AimContext&) {
                     return took_reason(v, Route::prefill_vec8, reason);
                   });
  };
  const auto block = reason_aim("fused_block_size_not_16");
  const auto unaligned = reason_aim("fused_unaligned");
  const auto k128 = reason_aim("fused_k_not_multiple_of_128");
  const auto sm = reason_aim("fused_sm_below_80");
  const auto above = reason_aim("fused_m_above_crossover");
  const auto scalar = add_aim(f,
                              "B off 4 bytes: prefill_fused and prefill_vec8 step aside, "
                              "prefill_scalar for unaligned",
                              [](const CaseSpec&, const CaseVerdict& v, const AimContext&) {
                                return took_reason(v, Route::prefill_scalar, "unaligned");
                              });
  const auto base = [](int64_t M, int64_t K, int64_t bs, uint64_t seed) {
    return make_case("", M, 24, K, bs, seed % 2 ? DType::fp16 : DType::bf16, seed % 2 == 0,
                     seed % 3 == 0, seed);
  };
  aimed(f, base(16, 256, 32, 1), {block});
  aimed(f, base(12, 256, 8, 2), {block});
  for (uint32_t a : {2u, 8u}) {
    CaseSpec c = base(16, 256, 16, 3);
    c.a_offset = a;
    aimed(f, c, {unaligned});
  }
  {
    CaseSpec c = base(16, 256, 16, 4);
    c.b_offset = 8;  // 4-byte aligned: prefill_vec8 takes it
    aimed(f, c, {unaligned});
    c.b_offset = 2;
    aimed(f, c, {scalar});
    c.b_offset = 0;
    c.scales_offset = 2;
    aimed(f, c, {unaligned});
  }
  aimed(f, base(16, 264, 16, 5), {k128});
  aimed(f, base(40, 136, 16, 6), {k128});
  {
    CaseSpec c = base(16, 256, 16, 7);
    c.options.simulated_caps = simulated(kMinMmaSm - 1, false);
    aimed(f, c, {sm});
  }
  {
    // Either side of the executed crossover's other half: M = 17 on the
    // least weights, and M = 32 one row of W under 2^20.
    aimed(f, make_case("", 17, 8, 128, 16, DType::bf16, false, false, 8), {above});
    aimed(f, make_case("", 32, 8191, 128, 16, DType::fp16, true, false, 9), {above});
    CaseSpec c = make_case("", kFusedMaxM + 1, 8, 128, 16, DType::bf16, true, true, 8);
    c.options.simulated_caps = without_wgmma();
    aimed(f, c, {above});
    c.M = kFusedMaxMWgmma + 1;
    c.options.simulated_caps = with_wgmma();
    aimed(f, c, {above});
  }
  f.random = cases(
      f.name,
      [](const std::vector<int64_t>& d) {
        // d[3] picks the need that fails.
        int64_t bs = 16, K = 128 * d[2];
        if (d[3] == 0) bs = d[4] % 2 ? 8 : 32;
        if (d[3] == 2) K += 8 * (1 + d[4] % 15);
        CaseSpec c = make_case("", d[0], d[1], K, bs, DType::fp16, false, false, 1);
        if (d[3] == 1) c.a_offset = static_cast<uint32_t>(2 * (1 + d[4] % 7));
        if (d[3] == 3) c.options.simulated_caps = simulated(kMinMmaSm - 1, false);
        if (d[3] == 4) c.b_offset = static_cast<uint32_t>(1 + d[4] % 15);
        return c;
      },
      dims({uniform(9, 40), in(1, 48), uniform(1, 4), uniform(0, 4), uniform(0, 14)}));
  f.targets = {{{Route::prefill_vec8, Route::prefill_scalar}, 1.0}, {{Route::prefill_vec8}, 0.5}};
  return f;
}

std::vector<Family> build_all() {
  return {decode(),     decode_miss(), prefill_vec8(),
          odd_block(),  k_tail(),      partial_scale_block(),
          m_boundary(), n_one(),       misaligned(),
          empty(),      value_class(), geometry(),
          capability(), alignment(),   prefill_fused(),
          fused_miss()};
}

}  // namespace

const std::vector<Family>& all_families() {
  static const std::vector<Family> families = build_all();
  return families;
}

const Family* find_family(const std::string& name) {
  for (const Family& f : all_families()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::vector<CaseSpec> sample_family(const Family& family, int count, uint64_t seed) {
  std::vector<CaseSpec> out;
  rc::Random random(seed);
  for (int i = 0; i < count; ++i) {
    // Sizes grow over the sample, as RapidCheck's own runs do.
    const int size = count > 1 ? i * rc::kNominalSize / (count - 1) : rc::kNominalSize;
    out.push_back(family.random(random.split(), size).value());
  }
  return out;
}

std::string check_targets(const Family& family, const std::vector<Route>& taken) {
  if (taken.empty()) return family.name + ": no random case ran";
  std::ostringstream problems;
  for (const RouteTarget& t : family.targets) {
    const auto hits = std::count_if(taken.begin(), taken.end(), [&](Route r) {
      return std::find(t.routes.begin(), t.routes.end(), r) != t.routes.end();
    });
    const double share = static_cast<double>(hits) / static_cast<double>(taken.size());
    if (share < t.min_share) {
      problems << family.name << ": reached ";
      for (std::size_t i = 0; i < t.routes.size(); ++i)
        problems << (i ? "/" : "") << route_name(t.routes[i]);
      problems << " in " << hits << " of " << taken.size() << " cases (" << share * 100
               << "%), needs " << t.min_share * 100 << "%; ";
    }
  }
  return problems.str();
}

std::string check_class_targets(const Family& family, const std::vector<ClassRun>& runs) {
  std::ostringstream problems;
  for (const ClassTarget& t : family.class_targets) {
    for (Route r : t.routes) {
      const bool reached = std::any_of(runs.begin(), runs.end(), [&](const ClassRun& run) {
        return run.value_class == t.value_class &&
               std::find(run.routes.begin(), run.routes.end(), r) != run.routes.end();
      });
      if (!reached) {
        problems << family.name << ": no passing case ran value class "
                 << value_class_name(t.value_class) << " on " << route_name(r) << "; ";
      }
    }
  }
  return problems.str();
}

AimContext aim_context(const nvh::Backend& backend) {
  AimContext c;
  c.kind = backend.kind();
  c.multiprocessors = backend.caps().multiprocessors;
  c.native_missing = native_sm120_missing_capability(device_caps(backend));
  c.wgmma = device_caps(backend).wgmma;
  return c;
}

bool ran_or_gated(const CaseVerdict& v, const AimContext& c) {
  return v.outcome == Outcome::ok ||
         (v.outcome == Outcome::not_supported && v.route == route_name(Route::native_sm120) &&
          !c.native_missing.empty());
}

std::string check_aims(const Family& family, const std::vector<ExampleResult>& examples,
                       const AimContext& context) {
  std::ostringstream problems;
  std::map<std::string, const ExampleResult*> by_name;
  for (const ExampleResult& e : examples) by_name[e.spec.name()] = &e;
  std::set<std::string> named;
  for (const Aim& aim : family.aims) {
    if (aim.cases.empty())
      problems << family.name << ": aim \"" << aim.claim << "\" names no example; ";
    named.insert(aim.cases.begin(), aim.cases.end());
    if (!aim.unreachable_here(context).empty()) continue;
    for (const std::string& name : aim.cases) {
      const auto it = by_name.find(name);
      if (it == by_name.end()) {
        problems << family.name << "/" << name << ", aimed at \"" << aim.claim
                 << "\", did not run; ";
      } else if (!aim.reached(it->second->spec, it->second->verdict, context)) {
        const CaseVerdict& v = it->second->verdict;
        problems << family.name << "/" << name << " misses its aim \"" << aim.claim << "\" ("
                 << outcome_name(v.outcome) << ", " << (v.route.empty() ? "no route" : v.route)
                 << " " << v.decision.variant << " for "
                 << (v.reason.empty() ? "no reason" : v.reason) << "); ";
      }
    }
  }
  if (!family.aims.empty()) {
    for (const CaseSpec& s : family.examples) {
      if (!named.count(s.name())) problems << family.name << "/" << s.name() << " states no aim; ";
    }
  }
  return problems.str();
}

std::vector<std::string> aims_unreachable_here(const Family& family, const AimContext& context) {
  std::vector<std::string> out;
  for (const Aim& aim : family.aims) {
    const std::string why = aim.unreachable_here(context);
    if (!why.empty()) out.push_back(aim.claim + ": " + why);
  }
  return out;
}

}  // namespace nvfp4
