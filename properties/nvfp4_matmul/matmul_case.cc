#include "properties/nvfp4_matmul/matmul_case.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "harness/sha256.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "reference/nvfp4_matmul/dequant.h"
#include "reference/nvfp4_matmul/e4m3.h"
#include "reference/nvfp4_matmul/exactness.h"
#include "reference/nvfp4_matmul/float16.h"
#include "reference/nvfp4_matmul/gemm.h"
#include "reference/nvfp4_matmul/packing.h"

namespace nvfp4 {
namespace {

ref::Half ref_half(DType t) { return t == DType::fp16 ? ref::Half::fp16 : ref::Half::bf16; }

// Seeds the generator from everything that names the case, so two cases that
// differ only in shape still get unrelated data.
std::mt19937_64 rng_for(const CaseSpec& s) {
  std::seed_seq seq{static_cast<uint64_t>(s.seed),       static_cast<uint64_t>(s.M),
                    static_cast<uint64_t>(s.N),          static_cast<uint64_t>(s.K),
                    static_cast<uint64_t>(s.block_size), static_cast<uint64_t>(s.dtype),
                    static_cast<uint64_t>(s.exact)};
  return std::mt19937_64(seq);
}

std::vector<uint16_t> random_halves(std::mt19937_64& rng, int64_t count, double lo, double hi,
                                    ref::Half kind) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<uint16_t> out(static_cast<std::size_t>(count));
  for (auto& v : out) v = ref::round_to_half(u(rng), kind);
  return out;
}

std::vector<uint16_t> random_integers(std::mt19937_64& rng, int64_t count, int lo, int hi,
                                      ref::Half kind) {
  std::uniform_int_distribution<int> u(lo, hi);
  std::vector<uint16_t> out(static_cast<std::size_t>(count));
  for (auto& v : out) v = ref::round_to_half(u(rng), kind);
  return out;
}

// Gaussian weights whose blocks span several binades, so the E4M3 block
// scales differ from block to block.
ref::QuantizedWeight random_weight(std::mt19937_64& rng, const CaseSpec& s) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_int_distribution<int> binade(-3, 3);
  std::vector<float> W(static_cast<std::size_t>(s.N * s.K));
  for (int64_t n = 0; n < s.N; ++n) {
    float block_gain = 1.f;
    for (int64_t k = 0; k < s.K; ++k) {
      if (k % s.block_size == 0) block_gain = std::ldexp(1.f, binade(rng));
      W[n * s.K + k] = normal(rng) * block_gain;
    }
  }
  return ref::quantize_nvfp4(W.data(), s.N, s.K, s.block_size);
}

// Exact mode: random codes, power-of-two block scales in [2^-2, 2^2] and
// weight_scale_2 = 2^-2, so every weight and product sits on a 2^-5 grid.
ref::QuantizedWeight exact_weight(std::mt19937_64& rng, const CaseSpec& s) {
  std::uniform_int_distribution<int> code(0, 15), exponent(-2, 2);
  std::vector<uint8_t> codes(static_cast<std::size_t>(s.N * s.K));
  for (auto& c : codes) c = static_cast<uint8_t>(code(rng));
  ref::QuantizedWeight q;
  q.N = s.N;
  q.K = s.K;
  q.block_size = s.block_size;
  q.packed = ref::pack_e2m1_rows(codes, s.N, s.K);
  q.scales.resize(static_cast<std::size_t>(s.N * ref::scale_blocks_per_row(s.K, s.block_size)));
  for (auto& b : q.scales) b = ref::float_to_e4m3(std::ldexp(1.f, exponent(rng)));
  q.global_scale = 0.25f;
  return q;
}

// One ulp of the output type at |x|: the output is rounded from fp32 once
// more after the fp32 sum, so one whole ulp covers both roundings.
double output_ulp(double x, DType t) {
  const int mantissa_bits = t == DType::fp16 ? 10 : 7;
  const int min_exponent = t == DType::fp16 ? -14 : -126;
  const int e = x == 0 ? min_exponent : std::max(min_exponent, std::ilogb(x));
  return std::ldexp(1.0, e - mantissa_bits);
}

std::string at(int64_t m, int64_t n) {
  return "Y[" + std::to_string(m) + "," + std::to_string(n) + "]";
}

}  // namespace

CaseSpec make_case(std::string family, int64_t M, int64_t N, int64_t K, int64_t block_size,
                   DType dtype, bool bias, bool exact, uint64_t seed) {
  CaseSpec s;
  s.family = std::move(family);
  s.M = M;
  s.N = N;
  s.K = K;
  s.block_size = block_size;
  s.dtype = dtype;
  s.bias = bias;
  s.exact = exact;
  s.seed = seed;
  return s;
}

std::string CaseSpec::name() const {
  std::ostringstream o;
  o << dtype_name(dtype) << "_M" << M << "_N" << N << "_K" << K << "_bs" << block_size;
  if (bias) o << "_bias";
  if (exact) o << "_exact";
  if (prepacked) o << "_prepacked";
  if (a_offset) o << "_offA" << a_offset;
  if (b_offset) o << "_offB" << b_offset;
  if (scratch_offset) o << "_offS" << scratch_offset;
  if (scales_offset) o << "_offScale" << scales_offset;
  if (scale2_offset) o << "_offGlobal" << scale2_offset;
  if (bias_offset) o << "_offBias" << bias_offset;
  if (y_offset) o << "_offY" << y_offset;
  if (options.force_route) o << "_force-" << route_name(*options.force_route);
  if (options.native_opt_in) o << "_native";
  if (options.simulated_caps)
    o << "_sm" << options.simulated_caps->sm << (options.simulated_caps->native_fp4 ? "_fp4" : "")
      << (options.simulated_caps->wgmma ? "_wgmma" : "");
  if (value_class != ValueClass::none) o << "_v-" << value_class_name(value_class);
  o << "_s" << seed;
  return o.str();
}

namespace {

// Reads a name() back field by field, in the order name() writes them. A
// hand-written scanner: the name is a flat underscore-joined format of our
// own (route and value-class names contain '_' themselves, so a split on '_'
// would not do), and no library parses it.
class NameScanner {
 public:
  explicit NameScanner(const std::string& name) : name_(name) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("parse_case_name: name = " + name_ + ": at \"" +
                                name_.substr(pos_) + "\": " + what);
  }
  bool at_end() const { return pos_ == name_.size(); }
  // Consumes `prefix` when the rest starts with it and, if `digit_next`, a digit follows it.
  bool take(const std::string& prefix, bool digit_next = false) {
    if (name_.compare(pos_, prefix.size(), prefix) != 0) return false;
    const std::size_t after = pos_ + prefix.size();
    if (digit_next && (after >= name_.size() || name_[after] < '0' || name_[after] > '9'))
      return false;
    pos_ = after;
    return true;
  }
  void expect(const std::string& prefix, const std::string& what) {
    if (!take(prefix)) fail("expected \"" + prefix + "\" (" + what + ")");
  }
  // Decimal digits as name() writes them: no sign, no leading zero.
  template <class T>
  T number(const std::string& what) {
    std::size_t end = pos_;
    while (end < name_.size() && name_[end] >= '0' && name_[end] <= '9') ++end;
    if (end == pos_) fail(what + ": expected a whole number");
    if (name_[pos_] == '0' && end - pos_ > 1) fail(what + ": a leading 0 (name() writes none)");
    T value{};
    const auto [ptr, error] = std::from_chars(name_.data() + pos_, name_.data() + end, value);
    if (error != std::errc() || ptr != name_.data() + end) fail(what + ": out of range");
    pos_ = end;
    return value;
  }
  // The longest of `names` the rest starts with, followed by '_' or the end.
  std::string one_of(const std::vector<std::string>& names, const std::string& what) {
    std::string best;
    for (const std::string& n : names) {
      const std::size_t after = pos_ + n.size();
      if (name_.compare(pos_, n.size(), n) == 0 && (after == name_.size() || name_[after] == '_') &&
          n.size() > best.size()) {
        best = n;
      }
    }
    if (best.empty()) fail("expected " + what);
    pos_ += best.size();
    return best;
  }
  // A nonzero offset: name() leaves zero offsets out.
  uint32_t offset(const std::string& what) {
    const auto v = number<uint32_t>(what);
    if (v == 0) fail(what + ": 0 (name() leaves a zero offset out)");
    return v;
  }

 private:
  const std::string& name_;
  std::size_t pos_ = 0;
};

std::vector<std::string> route_names() {
  std::vector<std::string> names;
  for (Route r : kAllRoutes) names.push_back(route_name(r));
  return names;
}

std::vector<std::string> value_class_names() {
  std::vector<std::string> names;
  for (ValueClass c : all_value_classes()) names.push_back(value_class_name(c));
  return names;
}

}  // namespace

CaseSpec parse_case_name(const std::string& name) {
  NameScanner in(name);
  CaseSpec s;
  s.dtype = *parse_dtype(in.one_of({"fp16", "bf16"}, "the dtype, fp16 or bf16"));
  in.expect("_M", "M");
  s.M = in.number<int64_t>("M");
  in.expect("_N", "N");
  s.N = in.number<int64_t>("N");
  in.expect("_K", "K");
  s.K = in.number<int64_t>("K");
  in.expect("_bs", "block_size");
  s.block_size = in.number<int64_t>("block_size");
  s.bias = in.take("_bias");
  s.exact = in.take("_exact");
  s.prepacked = in.take("_prepacked");
  // "_offS" and "_offB" are prefixes of "_offScale" and "_offBias": a digit tells them apart.
  if (in.take("_offA", true)) s.a_offset = in.offset("A's offset");
  if (in.take("_offB", true)) s.b_offset = in.offset("B's offset");
  if (in.take("_offS", true)) s.scratch_offset = in.offset("the scratch's offset");
  if (in.take("_offScale", true)) s.scales_offset = in.offset("weight_scale's offset");
  if (in.take("_offGlobal", true)) s.scale2_offset = in.offset("weight_scale_2's offset");
  if (in.take("_offBias", true)) s.bias_offset = in.offset("bias's offset");
  if (in.take("_offY", true)) s.y_offset = in.offset("Y's offset");
  if (in.take("_force-"))
    s.options.force_route = *parse_route(in.one_of(route_names(), "a route name after _force-"));
  s.options.native_opt_in = in.take("_native");
  if (in.take("_sm", true)) {
    Caps caps;
    caps.sm = in.number<int>("the simulated sm");
    caps.native_fp4 = in.take("_fp4");
    caps.wgmma = in.take("_wgmma");
    s.options.simulated_caps = caps;
  }
  if (in.take("_v-"))
    s.value_class = *parse_value_class(in.one_of(value_class_names(), "a value class after _v-"));
  in.expect("_s", "the seed, last");
  s.seed = in.number<uint64_t>("the seed");
  if (!in.at_end()) in.fail("unexpected text after the seed (or a field out of name()'s order)");
  // Every field was read in name()'s order, so name() writes the same text
  // back; checked, so a field name() gains but this misses cannot pass.
  if (s.name() != name) {
    throw std::invalid_argument("parse_case_name: name = " + name + ": reads back as " + s.name());
  }
  return s;
}

// A test over all-zero data proves nothing: the first activation and the first
// weight code are made nonzero whatever the draw gave.
void ensure_nonzero(CaseInputs& in, ref::Half kind) {
  if (!in.A.empty() && (in.A[0] & 0x7FFF) == 0) in.A[0] = ref::round_to_half(1.0, kind);
  if (!in.W.packed.empty() && (in.W.packed[0] & 0x7) == 0) {
    in.W.packed[0] = static_cast<uint8_t>((in.W.packed[0] & 0xF0) | 0x2);  // code 2 = +1.0
  }
  if (!in.W.scales.empty() && (in.W.scales[0] & 0x7F) == 0)
    in.W.scales[0] = ref::float_to_e4m3(1.0f);
}

CaseInputs make_inputs(const CaseSpec& s) {
  auto rng = rng_for(s);
  const ref::Half kind = ref_half(s.dtype);
  CaseInputs in;
  if (s.exact) {
    in.A = random_integers(rng, s.M * s.K, -3, 3, kind);
    in.W = exact_weight(rng, s);
    if (s.bias) in.bias = random_integers(rng, s.N, -4, 4, kind);
  } else {
    in.A = random_halves(rng, s.M * s.K, -2.0, 2.0, kind);
    in.W = random_weight(rng, s);
    if (s.bias) in.bias = random_halves(rng, s.N, -1.0, 1.0, kind);
  }
  ensure_nonzero(in, kind);
  inject_value_class(s, in);
  return in;
}

CaseRun run_case(nvh::Backend& backend, const CaseSpec& s, const CaseInputs& in) {
  const std::size_t a_bytes = in.A.size() * 2, y_bytes = static_cast<std::size_t>(s.M * s.N) * 2;
  const std::size_t scratch_bytes = static_cast<std::size_t>(s.N * s.K) * 2;
  nvh::GuardedBuffer A(backend, a_bytes, s.a_offset, "A"),
      B(backend, in.W.packed.size(), s.b_offset, "B");
  nvh::GuardedBuffer Y(backend, y_bytes, s.y_offset, "Y"),
      scratch(backend, scratch_bytes, s.scratch_offset, "scratch");
  nvh::GuardedBuffer scales(backend, in.W.scales.size(), s.scales_offset, "weight_scale"),
      g(backend, sizeof(float), s.scale2_offset, "weight_scale_2");
  nvh::GuardedBuffer bias(backend, in.bias.size() * 2, s.bias_offset, "bias");
  A.upload(in.A);
  B.upload(in.W.packed);
  scales.upload(in.W.scales);
  g.upload(&in.W.global_scale, sizeof(float));
  bias.upload(in.bias);
  // Poison: all-ones bytes are NaN in fp16 and bf16, so an element the
  // operator never wrote cannot pass for a result.
  backend.fill(Y.data(), 0xFF, y_bytes);
  backend.fill(scratch.data(), 0xFF, scratch_bytes);

  const ElemType t = elem_type(s.dtype);
  MatmulArgs args;
  args.A = {A.data(), {s.M, s.K}, t};
  args.B = {B.data(), {s.N, ceil_div(s.K, 2)}, ElemType::e2m1x2};
  args.weight_scale = {scales.data(), {s.N, ceil_div(s.K, s.block_size)}, ElemType::e4m3};
  args.weight_scale_2 = {g.data(), {}, ElemType::fp32};
  if (s.bias) args.bias = {bias.data(), {s.N}, t};
  args.Y = {Y.data(), {s.M, s.N}, t};
  args.scratch = {scratch.data(), {s.N, s.K}, t};
  args.block_size = s.block_size;
  // The prepacked copy, made from B's bytes in a buffer of its own (16-byte
  // aligned, as prepack_for_fused needs, whatever B's offset), guarded too.
  std::optional<nvh::GuardedBuffer> packed_copy, prepacked;
  if (s.prepacked) {
    packed_copy.emplace(backend, in.W.packed.size(), 0, "B (for the prepack)");
    prepacked.emplace(backend, in.W.packed.size(), 0, "prepacked_B");
    packed_copy->upload(in.W.packed);
    prepack_for_fused(backend, {packed_copy->data(), args.B.shape, ElemType::e2m1x2}, s.K,
                      prepacked->data());
    args.prepacked_B = {prepacked->data(), args.B.shape, ElemType::e2m1x2};
  }

  CaseRun run;
  const auto mod16 = [](const void* p) {
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p) % 16);
  };
  run.addresses = {mod16(A.data()),    mod16(B.data()), mod16(scales.data()), mod16(g.data()),
                   mod16(bias.data()), mod16(Y.data()), mod16(scratch.data())};
  run.decision = run_matmul(backend, args, s.options);
  // run_matmul explains nothing (the launch path builds no text); a case's verdict quotes the
  // explanation.
  run.decision.detail =
      explain_route(describe_problem(args), device_caps(backend), s.options).detail;
  backend.synchronize();
  run.Y = Y.download_as<uint16_t>(static_cast<std::size_t>(s.M * s.N));
  if (route_row(run.decision.route).needs_scratch) {
    run.scratch = scratch.download_as<uint16_t>(static_cast<std::size_t>(s.N * s.K));
  }
  run.damaged_guard_bytes =
      A.damaged_guard_bytes() + B.damaged_guard_bytes() + Y.damaged_guard_bytes() +
      scratch.damaged_guard_bytes() + scales.damaged_guard_bytes() + g.damaged_guard_bytes() +
      bias.damaged_guard_bytes() +
      (prepacked ? prepacked->damaged_guard_bytes() + packed_copy->damaged_guard_bytes() : 0);
  run.y_sha256 =
      nvh::tensor_sha256(dtype_name(s.dtype), {s.M, s.N}, run.Y.data(), run.Y.size() * 2);
  return run;
}

Oracle make_oracle(const CaseSpec& s, const CaseInputs& in) {
  const ref::Half kind = ref_half(s.dtype);
  Oracle o;
  o.W = ref::dequantize(in.W, kind);
  const uint16_t* bias = in.bias.empty() ? nullptr : in.bias.data();
  o.y64 = ref::gemm_fp64(in.A.data(), o.W.data(), bias, s.M, s.N, s.K, kind);
  o.y_rounded = ref::round_output(o.y64, kind);
  // Every case: check_output_bound needs each element's outcome (NaN,
  // infinities and exact sums must have the reference's bits in any mode).
  const ref::ExactnessReport r =
      ref::analyze_exactness(in.A.data(), o.W.data(), bias, s.M, s.N, s.K, kind);
  o.exact = r.exact;
  o.exact_why = r.why;
  o.outcomes = r.outcomes;
  return o;
}

std::string check_scratch(const CaseRun& run, const Oracle& o) {
  if (run.scratch.empty()) return "";
  if (run.scratch.size() != o.W.size())
    return "scratch has " + std::to_string(run.scratch.size()) + " elements, reference " +
           std::to_string(o.W.size());
  if (std::memcmp(run.scratch.data(), o.W.data(), o.W.size() * 2) == 0) return "";
  std::size_t mismatches = 0, first = 0;
  for (std::size_t i = 0; i < o.W.size(); ++i) {
    if (run.scratch[i] != o.W[i] && mismatches++ == 0) first = i;
  }
  std::ostringstream msg;
  msg << mismatches << " scratch elements differ from the reference dequant; first at flat index "
      << first << ": got 0x" << std::hex << run.scratch[first] << ", expected 0x" << o.W[first];
  return msg.str();
}

namespace {

bool is_nan_half(uint16_t bits, DType t) {
  const uint16_t exp_mask = t == DType::fp16 ? 0x7C00 : 0x7F80;
  return (bits & exp_mask) == exp_mask && (bits & ~exp_mask & 0x7FFF) != 0;
}

bool is_inf_half(uint16_t bits, DType t) {
  return (bits & 0x7FFF) == (t == DType::fp16 ? 0x7C00 : 0x7F80);
}

// The magnitude from which a value rounds to infinity in the dtype: the
// largest finite value plus half its ulp.
double overflow_threshold(DType t) { return t == DType::fp16 ? 65520.0 : 0x1.FFp127; }

std::string element_mismatch(int64_t m, int64_t n, uint16_t got, uint16_t want,
                             const std::string& why) {
  std::ostringstream msg;
  msg << at(m, n) << " = 0x" << std::hex << got << ", expected 0x" << want << std::dec << ": "
      << why;
  return msg.str();
}

// For an element whose outcome depends on the summation order:
// |y - y64| <= ulp(y64) + (K + 2) * 2^-23 * S + (K + 2) * 2^(shift - 149),
// S = sum_k |a_k w_k| + |bias|:
//   * ulp(y64): the final rounding to fp16/bf16 (after fp32), one ulp for the two roundings;
//   * (K + 2) * 2^-23 * S: fp32 accumulation in any order, each add off by at most one fp32
//     ulp (2^-23 relative, which also covers tensor cores that truncate rather than round),
//     plus the bias add and the fast path's power-of-two restore;
//   * (K + 2) * 2^(shift - 149): what the relative term misses, an fp32 subnormal spacing
//     per operation; gemv_mma's bf16 fast path sums products up to 2^7 times smaller
//     (shift 7, DESIGN.md "Special values"), so its spacing counts 2^7 times more.
// The weights are the contract's on every route, so no term for them.
// An infinite output passes where y64 plus the bound reaches the overflow threshold.
// `a`, `w`: A and the reference's W as doubles (decoded once per check, not
// once per product).
std::string check_rounded_element(const CaseSpec& s, const CaseInputs& in, const Oracle& o,
                                  const std::vector<double>& a, const std::vector<double>& w,
                                  int64_t m, int64_t n, uint16_t bits, int shift) {
  const ref::Half kind = ref_half(s.dtype);
  double S = in.bias.empty() ? 0.0 : std::fabs(ref::half_to_double(in.bias[n], kind));
  for (int64_t k = 0; k < s.K; ++k) S += std::fabs(a[m * s.K + k] * w[n * s.K + k]);
  const double ref_y = o.y64[m * s.N + n];
  const double bound = output_ulp(std::fabs(ref_y), s.dtype) + (s.K + 2) * std::ldexp(S, -23) +
                       (s.K + 2) * std::ldexp(1.0, shift - 149);
  const double got = ref::half_to_double(bits, kind);
  // An infinity means an fp32 value at or past the overflow threshold: its
  // distance from y64 is how far y64 falls short of the threshold.
  const double err = !is_inf_half(bits, s.dtype) ? std::fabs(got - ref_y)
                     : std::signbit(got) == std::signbit(ref_y)
                         ? std::max(0.0, overflow_threshold(s.dtype) - std::fabs(ref_y))
                         : overflow_threshold(s.dtype) + std::fabs(ref_y);
  if (err <= bound) return "";  // false for NaN: a NaN is never within a bound
  std::ostringstream msg;
  msg << at(m, n) << " = " << ref::half_to_double(bits, kind) << " (0x" << std::hex << bits
      << std::dec << "), fp64 reference " << ref_y << ": error " << err << " exceeds the bound "
      << bound;
  return msg.str();
}

}  // namespace

std::string check_output_bound(const CaseSpec& s, const CaseInputs& in, const CaseRun& run,
                               const Oracle& o) {
  const int shift = run.decision.route == Route::gemv_mma && s.dtype == DType::bf16 ? 7 : 0;
  std::vector<double> a, w;  // decoded at the first element whose outcome depends on the order
  for (int64_t m = 0; m < s.M; ++m) {
    for (int64_t n = 0; n < s.N; ++n) {
      const std::size_t i = static_cast<std::size_t>(m * s.N + n);
      const uint16_t bits = run.Y[i];
      const ref::SumOutcome outcome = o.outcomes[i];
      if (is_nan_half(bits, s.dtype) && bits != 0x7FFF) {
        return element_mismatch(m, n, bits, 0x7FFF, "every NaN written is 0x7FFF");
      }
      if (ref::outcome_is_determined(outcome)) {
        if (bits != o.y_rounded[i]) {
          return element_mismatch(m, n, bits, o.y_rounded[i],
                                  std::string("the sum's outcome is ") +
                                      ref::sum_outcome_name(outcome) +
                                      " in every order, so every route has the reference's bits");
        }
        continue;
      }
      if (outcome == ref::SumOutcome::overflow &&
          (is_nan_half(bits, s.dtype) || is_inf_half(bits, s.dtype)))
        continue;
      if (a.empty() && s.K > 0) {
        const ref::Half kind = ref_half(s.dtype);
        a = ref::halves_to_doubles(in.A.data(), s.M * s.K, kind);
        w = ref::halves_to_doubles(o.W.data(), s.N * s.K, kind);
      }
      if (std::string e = check_rounded_element(s, in, o, a, w, m, n, bits, shift); !e.empty())
        return e;
    }
  }
  return "";
}

std::string check_output_exact(const CaseRun& run, const Oracle& o) {
  if (!o.exact) return "the case is not exact: " + o.exact_why;
  if (run.Y.size() == o.y_rounded.size() &&
      std::memcmp(run.Y.data(), o.y_rounded.data(), run.Y.size() * 2) == 0) {
    return "";
  }
  for (std::size_t i = 0; i < run.Y.size(); ++i) {
    if (run.Y[i] != o.y_rounded[i]) {
      std::ostringstream msg;
      msg << "output element " << i << " is 0x" << std::hex << run.Y[i]
          << ", the rounded exact sum is 0x" << o.y_rounded[i];
      return msg.str();
    }
  }
  return "output has " + std::to_string(run.Y.size()) + " elements, reference " +
         std::to_string(o.y_rounded.size());
}

std::string check_guards(const CaseRun& run) {
  if (run.damaged_guard_bytes == 0) return "";
  return std::to_string(run.damaged_guard_bytes) +
         " guard bytes around the buffers were overwritten";
}

// Whether weight_scale_2 alone makes every weight zero: it is +-0, or so
// small that even the largest weight the format has, 6 * 448 * |g|, rounds
// to zero in the dtype (a value class, DESIGN.md "Special values").
bool g_zeroes_every_weight(float g, DType t) {
  const uint8_t six = 0x7, max_scale = 0x7E;  // E2M1 6.0, E4M3 448
  const uint16_t w =
      ref::dequantize_element(six, ref::scale_product(max_scale, std::fabs(g)), ref_half(t));
  return (w & 0x7FFF) == 0;
}

std::string check_nonzero(const CaseSpec& s, const CaseInputs& in, const CaseRun& run,
                          const Oracle& o) {
  if (s.M == 0 || s.N == 0 || s.K == 0) return "";
  const auto any = [](const auto& v, auto pred) { return std::any_of(v.begin(), v.end(), pred); };
  const auto nonzero_half = [](uint16_t b) { return (b & 0x7FFF) != 0; };
  if (!any(in.A, nonzero_half)) return "A is all zero";
  // Zero weights are a proof of nothing unless weight_scale_2 is what made
  // them zero; the codes and scales themselves must not be all zero.
  if (!any(in.W.packed, [](uint8_t b) { return (b & 0x77) != 0; })) return "B's codes are all zero";
  if (!any(in.W.scales, [](uint8_t b) { return (b & 0x7F) != 0; }))
    return "weight_scale is all zero";
  if (!any(o.W, nonzero_half) && !g_zeroes_every_weight(in.W.global_scale, s.dtype))
    return "W is all zero";
  // A zero output is only right where the exact answer is zero everywhere too.
  if (!any(run.Y, nonzero_half) && any(o.y64, [](double y) { return y != 0.0; }))
    return "Y is all zero";
  return "";
}

}  // namespace nvfp4
