#include "properties/nvfp4_matmul/tensor_file.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "harness/sha256.h"
#include "kernels/nvfp4_matmul/dispatch.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"

// The tensors' bytes are copied into host vectors as they lie in the file,
// which is little-endian: so must this host be.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");

namespace nvfp4 {
namespace {

const char* const kNames[] = {"A", "B", "weight_scale", "weight_scale_2", "bias"};

// Where each operand's offset lives in a CaseSpec, by its metadata key.
struct OffsetKey {
  const char* key;
  uint32_t CaseSpec::*field;
};
const OffsetKey kOffsetKeys[] = {{"offset_A", &CaseSpec::a_offset},
                                 {"offset_B", &CaseSpec::b_offset},
                                 {"offset_weight_scale", &CaseSpec::scales_offset},
                                 {"offset_weight_scale_2", &CaseSpec::scale2_offset},
                                 {"offset_bias", &CaseSpec::bias_offset},
                                 {"offset_Y", &CaseSpec::y_offset},
                                 {"offset_scratch", &CaseSpec::scratch_offset}};
// The guard in front of a payload is 512 bytes (GuardedBuffer); an offset
// that moves a payload through every alignment class needs less than 256.
constexpr int64_t kMaxOffset = 255;

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + "]";
}

// `where` is "tensor_case_from: <source>".
[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::invalid_argument(where + ": " + what);
}

const nvh::SafeTensor& tensor(const nvh::SafeTensorsFile& file, const std::string& name,
                              const std::string& where) {
  const auto it = file.tensors.find(name);
  if (it == file.tensors.end()) {
    fail(where,
         "no tensor \"" + name +
             "\" (the operator takes A, B, weight_scale, weight_scale_2 and optionally bias)");
  }
  return it->second;
}

void expect_dtype(const std::string& name, const nvh::SafeTensor& t,
                  const std::vector<std::string>& allowed, const std::string& where) {
  if (std::find(allowed.begin(), allowed.end(), t.dtype) != allowed.end()) return;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : " or ") + a;
  fail(where, "tensor " + name + " has dtype " + t.dtype + ": must be " + list);
}

void expect_shape(const std::string& name, const nvh::SafeTensor& t,
                  const std::vector<int64_t>& shape, const std::string& meaning,
                  const std::string& where) {
  if (t.shape != shape) {
    fail(where, "tensor " + name + " has shape " + shape_text(t.shape) + ": must be " + meaning +
                    " = " + shape_text(shape));
  }
}

// A whole number in [lo, hi] from a metadata string.
int64_t metadata_number(const std::map<std::string, std::string>& metadata, const std::string& key,
                        int64_t fallback, int64_t lo, int64_t hi, const std::string& where) {
  const auto it = metadata.find(key);
  if (it == metadata.end()) return fallback;
  const std::string& text = it->second;
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < lo || value > hi) {
    fail(where, "__metadata__ " + key + " = \"" + text + "\": must be a whole number from " +
                    std::to_string(lo) + " to " + std::to_string(hi));
  }
  return value;
}

std::vector<uint16_t> halves(const nvh::SafeTensor& t) {
  std::vector<uint16_t> out(t.data.size() / 2);
  std::memcpy(out.data(), t.data.data(), out.size() * 2);
  return out;
}

nvh::SafeTensor halves_tensor(DType dtype, std::vector<int64_t> shape,
                              const std::vector<uint16_t>& values) {
  nvh::SafeTensor t{dtype == DType::fp16 ? "F16" : "BF16", std::move(shape),
                    std::vector<uint8_t>(values.size() * 2)};
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

// The operator's own limit (describe_problem): every dimension below 2^31.
constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;

void check_dim(const std::string& tensor_name, const char* dim, int64_t value,
               const std::string& where) {
  if (value > kMaxDim) {
    fail(where, "tensor " + tensor_name + ": " + dim + " = " + std::to_string(value) +
                    ": must be below 2^31");
  }
}

// A file read by read_safetensors holds what its shapes say; a SafeTensorsFile
// made in memory may not, and the copies below trust the sizes.
void check_bytes(const std::string& name, const nvh::SafeTensor& t, const std::string& where) {
  uint64_t bytes = nvh::safetensors_dtype_bytes(t.dtype);
  if (bytes == 0) return;  // an unknown dtype: each tensor's dtype check names it
  for (int64_t d : t.shape) {
    if (d < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) {
      fail(where, "tensor " + name + " has shape " + shape_text(t.shape) + ": not a valid size");
    }
  }
  if (bytes != t.data.size()) {
    fail(where, "tensor " + name + " holds " + std::to_string(t.data.size()) + " bytes; " +
                    t.dtype + " " + shape_text(t.shape) + " needs " + std::to_string(bytes));
  }
}

}  // namespace

TensorCase tensor_case_from(const nvh::SafeTensorsFile& file, const std::string& source) {
  const std::string where = "tensor_case_from: " + source;
  for (const auto& [name, t] : file.tensors) {
    if (std::find(std::begin(kNames), std::end(kNames), name) == std::end(kNames)) {
      fail(where, "unexpected tensor \"" + name +
                      "\" (the operator takes A, B, weight_scale, weight_scale_2 and "
                      "optionally bias)");
    }
    check_bytes(name, t, where);
  }
  TensorCase c;
  CaseSpec& s = c.spec;
  s.family = "inputs";
  s.block_size = metadata_number(file.metadata, "block_size", 16, 1, kMaxDim, where);
  for (const OffsetKey& k : kOffsetKeys) {
    s.*k.field =
        static_cast<uint32_t>(metadata_number(file.metadata, k.key, 0, 0, kMaxOffset, where));
  }

  const nvh::SafeTensor& A = tensor(file, "A", where);
  expect_dtype("A", A, {"F16", "BF16"}, where);
  if (A.shape.size() != 2)
    fail(where, "tensor A has shape " + shape_text(A.shape) + ": must be [M, K]");
  s.dtype = A.dtype == "F16" ? DType::fp16 : DType::bf16;
  s.M = A.shape[0];
  s.K = A.shape[1];
  check_dim("A", "M", s.M, where);
  check_dim("A", "K", s.K, where);

  const nvh::SafeTensor& B = tensor(file, "B", where);
  expect_dtype("B", B, {"U8"}, where);
  if (B.shape.size() != 2)
    fail(where, "tensor B has shape " + shape_text(B.shape) + ": must be [N, ceil(K/2)]");
  s.N = B.shape[0];
  check_dim("B", "N", s.N, where);
  expect_shape("B", B, {s.N, ceil_div(s.K, 2)},
               "[N, ceil(K/2)] with K = " + std::to_string(s.K) + " (A's)", where);

  const nvh::SafeTensor& scales = tensor(file, "weight_scale", where);
  expect_dtype("weight_scale", scales, {"F8_E4M3", "U8"}, where);
  expect_shape("weight_scale", scales, {s.N, ceil_div(s.K, s.block_size)},
               "[N, ceil(K/block_size)] with N = " + std::to_string(s.N) + ", K = " +
                   std::to_string(s.K) + ", block_size = " + std::to_string(s.block_size),
               where);

  const nvh::SafeTensor& g = tensor(file, "weight_scale_2", where);
  expect_dtype("weight_scale_2", g, {"F32"}, where);
  if (!g.shape.empty() && g.shape != std::vector<int64_t>{1}) {
    fail(where, "tensor weight_scale_2 has shape " + shape_text(g.shape) +
                    ": must be [] or [1] (one scalar)");
  }

  c.inputs.A = halves(A);
  c.inputs.W.N = s.N;
  c.inputs.W.K = s.K;
  c.inputs.W.block_size = s.block_size;
  c.inputs.W.packed = B.data;
  c.inputs.W.scales = scales.data;
  std::memcpy(&c.inputs.W.global_scale, g.data.data(), sizeof(float));

  if (const auto bias = file.tensors.find("bias"); bias != file.tensors.end()) {
    expect_dtype("bias", bias->second, {A.dtype}, where);
    expect_shape("bias", bias->second, {s.N}, "[N] with N = " + std::to_string(s.N), where);
    s.bias = true;
    c.inputs.bias = halves(bias->second);
  }
  return c;
}

TensorCase read_tensor_case(const std::string& path) {
  return tensor_case_from(nvh::read_safetensors(path), path);
}

nvh::SafeTensorsFile tensor_file_of(const CaseSpec& s, const CaseInputs& in,
                                    const std::map<std::string, std::string>& extra) {
  nvh::SafeTensorsFile f;
  f.metadata = extra;
  f.metadata["block_size"] = std::to_string(s.block_size);
  for (const OffsetKey& k : kOffsetKeys) {
    if (s.*k.field != 0) f.metadata[k.key] = std::to_string(s.*k.field);
  }
  f.tensors["A"] = halves_tensor(s.dtype, {s.M, s.K}, in.A);
  f.tensors["B"] = {"U8", {s.N, ceil_div(s.K, 2)}, in.W.packed};
  f.tensors["weight_scale"] = {"F8_E4M3", {s.N, ceil_div(s.K, s.block_size)}, in.W.scales};
  nvh::SafeTensor g{"F32", {}, std::vector<uint8_t>(sizeof(float))};
  std::memcpy(g.data.data(), &in.W.global_scale, sizeof(float));
  f.tensors["weight_scale_2"] = g;
  if (s.bias) f.tensors["bias"] = halves_tensor(s.dtype, {s.N}, in.bias);
  return f;
}

bool TensorRunReport::failed() const {
  const bool any_ran = std::any_of(runs.begin(), runs.end(),
                                   [](const RouteRun& r) { return r.outcome == Outcome::ok; });
  const bool any_failed = std::any_of(runs.begin(), runs.end(),
                                      [](const RouteRun& r) { return r.outcome == Outcome::fail; });
  return any_failed || !any_ran;
}

namespace {

// The same checks as a verify case's (b) and (c), for one forced route. No
// separate exact check ((d)): in an exact problem every element's outcome is
// determined, and for those check_output_bound demands the reference's bits.
// Not check_nonzero either: all-zero tensors are the user's to run.
std::string first_problem(const TensorCase& c, const Oracle& oracle, const CaseRun& run) {
  if (std::string e = check_scratch(run, oracle); !e.empty()) return "(scratch) " + e;
  if (std::string e = check_guards(run); !e.empty()) return "(guards) " + e;
  if (std::string e = check_output_bound(c.spec, c.inputs, run, oracle); !e.empty())
    return "(output) " + e;
  return "";
}

RouteRun run_route(nvh::Backend& backend, const TensorCase& c, const Oracle& oracle, Route r,
                   const Caps& caps) {
  RouteRun rr;
  rr.route = r;
  const std::string missing = r == Route::native_sm120 ? native_sm120_missing_capability(caps) : "";
  const std::string refused =
      missing.empty() ? route_precondition_failure(r, problem_of(c.spec), caps) : "";
  if (!missing.empty() || !refused.empty()) {
    rr.outcome = Outcome::not_supported;
    rr.detail = missing.empty() ? refused : "this backend lacks " + missing;
    return rr;
  }
  CaseSpec spec = c.spec;
  spec.options.force_route = r;
  CaseRun run;
  try {
    run = run_case(backend, spec, c.inputs);
  } catch (const RouteUnavailable& e) {
    rr.outcome = Outcome::not_supported;
    rr.detail = e.what();
    return rr;
  } catch (const std::exception& e) {
    rr.outcome = Outcome::fail;
    rr.detail = std::string("threw: ") + e.what();
    return rr;
  }
  rr.y_sha256 = run.y_sha256;
  if (std::string e = first_problem(c, oracle, run); !e.empty()) {
    rr.outcome = Outcome::fail;
    rr.detail = e;
  } else {
    rr.detail = oracle.exact ? "the reference's bits (exact)"
                             : "within the contract's bound of the fp64 reference";
  }
  rr.Y = std::move(run.Y);
  return rr;
}

}  // namespace

TensorRunReport run_tensor_case(nvh::Backend& backend, const TensorCase& c,
                                std::optional<Route> only) {
  TensorRunReport report;
  const Oracle oracle = make_oracle(c.spec, c.inputs);
  report.exact = oracle.exact;
  report.exact_why = oracle.exact_why;
  report.reference_sha256 =
      nvh::tensor_sha256(dtype_name(c.spec.dtype), {c.spec.M, c.spec.N}, oracle.y_rounded.data(),
                         oracle.y_rounded.size() * 2);
  const Caps caps = device_caps(backend);
  const Route natural = select_route(problem_of(c.spec), caps, {}).route;
  for (Route r : kAllRoutes) {
    if (only && r != *only) continue;
    report.runs.push_back(run_route(backend, c, oracle, r, caps));
    report.runs.back().natural = r == natural;
  }
  return report;
}

std::string render_tensor_run(const TensorCase& c, const TensorRunReport& report) {
  const CaseSpec& s = c.spec;
  std::ostringstream out;
  out << dtype_name(s.dtype) << " M=" << s.M << " N=" << s.N << " K=" << s.K
      << " block_size=" << s.block_size << (s.bias ? " with bias" : " without bias")
      << "; reference Y " << report.reference_sha256 << " ("
      << (report.exact ? "exact: every route must give these bits"
                       : "not exact: " + report.exact_why)
      << ")\n";
  for (const RouteRun& r : report.runs) {
    out << std::left << std::setw(15) << route_name(r.route) << " " << std::setw(13)
        << outcome_name(r.outcome) << " " << std::setw(64)
        << (r.y_sha256.empty() ? "-" : r.y_sha256) << " " << (r.natural ? "(natural) " : "")
        << r.detail << "\n";
  }
  return out.str();
}

nvh::SafeTensorsFile outputs_file(const TensorCase& c, const TensorRunReport& report, bool single) {
  nvh::SafeTensorsFile f;
  for (const RouteRun& r : report.runs) {
    if (r.y_sha256.empty()) continue;
    const std::string name = single ? "Y" : std::string("Y.") + route_name(r.route);
    f.tensors[name] = halves_tensor(c.spec.dtype, {c.spec.M, c.spec.N}, r.Y);
    f.metadata[name + ".route"] = route_name(r.route);
    f.metadata[name + ".outcome"] = outcome_name(r.outcome);
    f.metadata[name + ".sha256"] = r.y_sha256;
  }
  return f;
}

}  // namespace nvfp4
