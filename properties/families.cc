#include "properties/families.h"

#include <algorithm>
#include <sstream>

namespace nvfp4 {
namespace {

// Every random case varies these the same way.
struct Common {
  DType dtype;
  bool bias, exact;
  uint64_t seed;
};

rc::Gen<Common> common() {
  return rc::gen::apply([](DType t, bool bias, bool exact, uint64_t seed) { return Common{t, bias, exact, seed}; },
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

rc::Gen<int64_t> in(int64_t lo, int64_t hi_inclusive) { return rc::gen::inRange<int64_t>(lo, hi_inclusive + 1); }
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
  Family f{"decode", "M <= 8 meeting the GEMV predicates: gemv_mma (K % 128 == 0) or gemv_scalar", {}, rc::gen::just(CaseSpec{}), {}};  // random is set below
  for (int64_t K : {32, 96, 128, 160, 256, 384}) {
    for (int64_t M : {1, 8}) f.examples.push_back(make_case(f.name, M, 17, K, 16, DType::fp16, true, false, 1));
  }
  for (int64_t N : {1, 2, 3, 4, 5, 15, 16, 17}) f.examples.push_back(make_case(f.name, 3, N, 128, 16, DType::bf16, false, true, 2));
  // Long rows, so that gemv_mma's warps (8 of them splitting K for so few
  // rows) each run past the copies their pipeline issues before it starts:
  // 32 and 32.5 stages of 256 k (the second ends on a half stage).
  for (int64_t K : {8192, 8320}) f.examples.push_back(make_case(f.name, 2, 17, K, 16, DType::bf16, true, false, 4));
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
  f.random = cases(f.name, [](const std::vector<int64_t>& d) { return make_case("", d[0], d[1], d[2], 16, DType::fp16, false, false, 1); },
                   dims({in(1, 8), in(1, 96), one_of({32, 64, 96, 128, 160, 192, 224, 256, 384, 512})}));
  f.targets = {{{Route::gemv_mma, Route::gemv_scalar}, 1.0}, {{Route::gemv_mma}, 0.15}, {{Route::gemv_scalar}, 0.15}};
  return f;
}

Family decode_miss() {
  Family f{"decode_miss", "M <= 8 but block_size != 16 or K % 32 != 0: the GEMV must be skipped", {}, rc::gen::just(CaseSpec{}), {}};  // random is set below
  for (int64_t bs : {8, 15, 17, 32}) f.examples.push_back(make_case(f.name, 8, 16, 64, bs, DType::fp16, true, false, 1));
  for (int64_t K : {16, 40, 48, 80, 120}) f.examples.push_back(make_case(f.name, 1, 16, K, 16, DType::bf16, false, true, 2));
  f.random = cases(f.name,
                   [](const std::vector<int64_t>& d) {
                     // d[3] picks the miss: a block size other than 16, or K an odd multiple of 16 / of 8.
                     const bool miss_block = d[3] % 2 == 0;
                     const int64_t bs = miss_block ? d[4] : 16;
                     const int64_t K = miss_block ? d[2] : (d[5] % 2 ? 16 * (2 * d[5] + 1) : 8 * (2 * d[5] + 1));
                     return make_case("", d[0], d[1], K, bs, DType::fp16, false, false, 1);
                   },
                   dims({in(1, 8), in(1, 64), in(1, 256), uniform(0, 1), one_of({2, 4, 7, 8, 15, 17, 24, 32, 64}), in(0, 15)}));
  f.targets = {{{Route::prefill_vec8, Route::prefill_scalar}, 1.0}};
  return f;
}

Family prefill_vec8() {
  Family f{"prefill_vec8", "M > 8, K % 8 == 0, even block_size: the vectorized dequant", {}, rc::gen::just(CaseSpec{}), {}};  // random is set below
  for (int64_t K : {8, 16, 24, 120, 128, 136}) f.examples.push_back(make_case(f.name, 9, 16, K, 16, DType::fp16, true, false, 1));
  for (int64_t bs : {2, 4, 6, 8, 10, 16, 32, 64}) f.examples.push_back(make_case(f.name, 16, 5, 64, bs, DType::bf16, false, true, 2));
  f.random = cases(f.name, [](const std::vector<int64_t>& d) { return make_case("", d[0], d[1], d[2], d[3], DType::fp16, false, false, 1); },
                   dims({in(9, 40), in(1, 64), times(8, 1, 48), times(2, 1, 32)}));
  f.targets = {{{Route::prefill_vec8}, 1.0}};
  return f;
}

Family odd_block() {
  Family f{"odd_block", "odd block_size: scales split packed bytes and cross 8-value chunks", {}, rc::gen::just(CaseSpec{}), {}};  // random is set below
  for (int64_t bs : {1, 3, 5, 7, 9, 15, 17, 31}) f.examples.push_back(make_case(f.name, 9, 7, 64, bs, DType::fp16, true, false, 1));
  f.examples.push_back(make_case(f.name, 4, 7, 45, 15, DType::bf16, false, true, 2));
  f.random = cases(f.name, [](const std::vector<int64_t>& d) { return make_case("", d[0], d[1], d[2], 2 * d[3] + 1, DType::fp16, false, false, 1); },
                   dims({in(1, 40), in(1, 48), in(1, 300), in(0, 20)}));
  f.targets = {{{Route::prefill_scalar}, 1.0}};
  return f;
}

Family k_tail() {
  Family f{"k_tail", "K % 8 != 0, including K < 8 and K < block_size: the scalar dequant's tail", {}, rc::gen::just(CaseSpec{}), {}};  // random is set below
  for (int64_t K : {1, 2, 7, 9, 15, 17, 33, 127}) f.examples.push_back(make_case(f.name, 9, 5, K, 16, DType::fp16, true, false, 1));
  f.examples.push_back(make_case(f.name, 2, 5, 13, 64, DType::bf16, false, true, 2));
  // More packed bytes (1100 x 1025) than prefill_scalar's capped grid has
  // threads on the H200 (132 x 32 blocks of 256) or the host executor
  // (8 x 32 blocks): each thread's trips then load their second byte too.
  f.examples.push_back(make_case(f.name, 9, 1100, 2049, 16, DType::bf16, true, false, 3));
  f.random = cases(f.name, [](const std::vector<int64_t>& d) { return make_case("", d[0], d[1], 8 * d[2] + d[3], d[4], DType::fp16, false, false, 1); },
                   dims({in(1, 40), in(1, 48), in(0, 40), in(1, 7), one_of({2, 4, 8, 16, 32, 64})}));
  f.targets = {{{Route::prefill_scalar}, 1.0}};
  return f;
}

Family partial_scale_block() {
  Family f{"partial_scale_block", "K % block_size != 0: the last scale block of each row is short", {}, rc::gen::just(CaseSpec{}), {}};  // random is set below
  for (int64_t K : {24, 40, 72}) f.examples.push_back(make_case(f.name, 12, 9, K, 16, DType::fp16, true, false, 1));
  f.examples.push_back(make_case(f.name, 12, 9, 96, 64, DType::bf16, false, true, 2));
  f.random = cases(f.name,
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
  Family f{"m_boundary", "M at 8 and 9: the decode/prefill boundary the seed's tests never crossed", {}, rc::gen::just(CaseSpec{}), {}};  // random is set below
  for (int64_t M : {8, 9}) {
    for (int64_t K : {128, 256}) f.examples.push_back(make_case(f.name, M, 32, K, 16, DType::fp16, true, M == 8, 1));
  }
  f.random = cases(f.name, [](const std::vector<int64_t>& d) { return make_case("", 8 + d[0], d[1], d[2], 16, DType::fp16, false, false, 1); },
                   dims({uniform(0, 1), in(1, 64), times(128, 1, 3)}));
  f.targets = {{{Route::gemv_mma}, 0.25}, {{Route::prefill_vec8}, 0.25}};
  return f;
}

Family n_one() {
  Family f{"n_one", "N = 1: one output column (gemv_scalar's rows1, a one-row scratch)", {}, rc::gen::just(CaseSpec{}), {}};  // random is set below
  for (int64_t M : {1, 8, 9, 33}) f.examples.push_back(make_case(f.name, M, 1, 96, 16, DType::fp16, true, false, 1));
  f.examples.push_back(make_case(f.name, 4, 1, 256, 16, DType::bf16, false, true, 2));
  f.random = cases(f.name, [](const std::vector<int64_t>& d) { return make_case("", d[0], 1, d[1], 16, DType::fp16, false, false, 1); },
                   dims({uniform(1, 16), times(32, 1, 8)}));
  f.targets = {{{Route::gemv_mma, Route::gemv_scalar}, 0.25}, {{Route::prefill_vec8}, 0.25}};
  return f;
}

Family misaligned() {
  Family f{"misaligned", "A, B or scratch off their vector alignment: decode and vec8 must step aside", {}, rc::gen::just(CaseSpec{}), {}};  // random is set below
  const auto off = [&](int64_t M, uint32_t a, uint32_t b, uint32_t s) {
    CaseSpec c = make_case(f.name, M, 16, 128, 16, DType::fp16, true, false, 1);
    c.a_offset = a;
    c.b_offset = b;
    c.scratch_offset = s;
    return c;
  };
  f.examples = {off(4, 2, 0, 0), off(4, 0, 4, 0), off(4, 0, 1, 0), off(16, 0, 2, 0), off(16, 0, 0, 8), off(16, 0, 8, 0)};
  f.random = cases(f.name,
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
  Family f{"empty", "M, N or K is zero: zero-fill plus bias, or nothing", {}, rc::gen::just(CaseSpec{}), {}};  // random is set below
  f.examples = {make_case(f.name, 0, 8, 32, 16, DType::fp16, true, false, 1), make_case(f.name, 4, 0, 32, 16, DType::fp16, true, false, 1),
                make_case(f.name, 4, 8, 0, 16, DType::fp16, true, false, 1), make_case(f.name, 4, 8, 0, 16, DType::bf16, false, false, 1)};
  f.random = cases(f.name,
                   [](const std::vector<int64_t>& d) {
                     const int64_t zero = d[3];
                     return make_case("", zero == 0 ? 0 : d[0], zero == 1 ? 0 : d[1], zero == 2 ? 0 : d[2], 16, DType::fp16,
                                 false, false, 1);
                   },
                   dims({in(1, 16), in(1, 16), in(1, 64), uniform(0, 2)}));
  f.targets = {{{Route::empty}, 1.0}};
  return f;
}

// ---- value classes (value_class.h, DESIGN.md "Special values") ----

bool is_bias_class(ValueClass c) { return value_class_input(c) == ValueInput::bias; }

CaseSpec value_case(const std::string& family, ValueClass c, int64_t M, int64_t N, int64_t K, DType t, bool bias,
                    uint64_t seed) {
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
           "NaN, infinities, -0, subnormals and extreme weight_scale_2 in every input, every route, exact mode",
           {},
           rc::gen::just(CaseSpec{}),
           {}};  // random is set below
  // M = 3, N = 17, K = 128: gemv_mma takes it (one full and one partial
  // 16-row tile, one 128-k step) and gemv_scalar, prefill_vec8 and
  // prefill_scalar are forced on it by the cross-route check.
  for (DType t : {DType::fp16, DType::bf16}) {
    for (ValueClass c : all_value_classes()) {
      for (int i = 0; i < value_examples(c, t); ++i) {
        f.examples.push_back(value_case(f.name, c, 3, 17, 128, t, i % 2 == 0, static_cast<uint64_t>(i)));
      }
      // K = 0: the empty route, where the output is the bias alone.
      if (is_bias_class(c)) f.examples.push_back(value_case(f.name, c, 2, 5, 0, t, true, 1));
    }
  }
  // One row, one column, and eight rows of A (the largest M the GEMVs take).
  for (ValueClass c : {ValueClass::a_neg_zero, ValueClass::a_subnormal, ValueClass::a_inf, ValueClass::scale_nan_ff}) {
    f.examples.push_back(value_case(f.name, c, 1, 1, 128, DType::bf16, false, 3));
    f.examples.push_back(value_case(f.name, c, 8, 32, 256, DType::fp16, true, 3));
  }
  const auto& classes = all_value_classes();
  f.random = rc::gen::apply(
      [name = f.name, classes](std::size_t which, DType t, int64_t M, int64_t N, bool k_zero, bool bias, uint64_t seed) {
        const ValueClass c = classes[which];
        const int64_t K = is_bias_class(c) && k_zero ? 0 : 128;
        return value_case(name, c, M, N, K, t, bias, seed);
      },
      rc::gen::inRange<std::size_t>(0, classes.size()), rc::gen::element(DType::fp16, DType::bf16), in(1, 8),
      in(1, 40), rc::gen::arbitrary<bool>(), rc::gen::arbitrary<bool>(), rc::gen::inRange<uint64_t>(1, 1000));
  f.targets = {{{Route::gemv_mma, Route::gemv_scalar, Route::empty}, 1.0}};
  for (ValueClass c : classes) {
    ClassTarget t{c, {Route::gemv_mma, Route::gemv_scalar, Route::prefill_vec8, Route::prefill_scalar}};
    if (is_bias_class(c)) t.routes.push_back(Route::empty);
    f.class_targets.push_back(t);
  }
  return f;
}

std::vector<Family> build_all() {
  return {decode(),  decode_miss(), prefill_vec8(), odd_block(),  k_tail(),
          partial_scale_block(), m_boundary(), n_one(), misaligned(), empty(), value_class()};
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
      for (std::size_t i = 0; i < t.routes.size(); ++i) problems << (i ? "/" : "") << route_name(t.routes[i]);
      problems << " in " << hits << " of " << taken.size() << " cases (" << share * 100 << "%), needs "
               << t.min_share * 100 << "%; ";
    }
  }
  return problems.str();
}

std::string check_class_targets(const Family& family, const std::vector<ClassRun>& runs) {
  std::ostringstream problems;
  for (const ClassTarget& t : family.class_targets) {
    for (Route r : t.routes) {
      const bool reached = std::any_of(runs.begin(), runs.end(), [&](const ClassRun& run) {
        return run.value_class == t.value_class && std::find(run.routes.begin(), run.routes.end(), r) != run.routes.end();
      });
      if (!reached) {
        problems << family.name << ": no passing case ran value class " << value_class_name(t.value_class) << " on "
                 << route_name(r) << "; ";
      }
    }
  }
  return problems.str();
}

}  // namespace nvfp4
