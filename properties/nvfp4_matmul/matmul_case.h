// One operator test case, end to end: a spec whose name() is its identity
// (test name, manifest key, CLI filter), inputs built from it, a run on a
// backend with guard bytes around every output, and the checks against the
// reference oracle.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "kernels/nvfp4_matmul/nvfp4_types.h"
#include "properties/nvfp4_matmul/value_class.h"
#include "reference/nvfp4_matmul/exactness.h"
#include "reference/nvfp4_matmul/quantize.h"

namespace nvfp4 {

struct CaseSpec {
  std::string family = "adhoc";
  int64_t M = 1, N = 1, K = 16, block_size = 16;
  DType dtype = DType::fp16;
  bool bias = false;
  // Exact mode: small-integer activations, power-of-two scales, so every fp32
  // partial sum is exact and every route must give the same bits.
  bool exact = false;
  // B also prepacked for prefill_fused's wgmma kernel (prepack_for_fused),
  // passed as MatmulArgs::prepacked_B (K % 128 == 0 only).
  bool prepacked = false;
  // Bytes the A, B and scratch payloads sit past a 256-byte boundary.
  uint32_t a_offset = 0, b_offset = 0, scratch_offset = 0;
  // The same for weight_scale, weight_scale_2, bias and Y (the alignment
  // family walks every operand through its alignment classes modulo 16).
  uint32_t scales_offset = 0, scale2_offset = 0, bias_offset = 0, y_offset = 0;
  uint64_t seed = 1;
  Options options;
  // A special class of one input, injected by make_inputs (value_class.h).
  ValueClass value_class = ValueClass::none;

  // "fp16_M9_N64_K128_bs16[_bias][_exact][_prepacked][_offA2_offB1_offS4][_offScale3_offGlobal4_offBias2_offY2]
  //  [_force-x][_native][_sm120[_fp4][_wgmma]][_v-g_inf]_s1": every field that differs from its
  //  default, so no two cases share a name (_fp4, _wgmma: the simulated device has native FP4,
  //  wgmma; _v-: the value class).
  std::string name() const;
};

// The case a name() names: every field name() writes, the rest (family:
// "adhoc"; the simulated device's backend label) at their defaults, so
// parse_case_name(n).name() == n for every name() and the parsed case makes
// the same inputs. Throws std::invalid_argument naming the name and the part
// that is wrong ("parse_case_name: name = X: at \"_M9q\": ..."), including a
// name that is not written as name() writes it (a zero offset, a leading 0).
CaseSpec parse_case_name(const std::string& name);

// A case by its shape and data; options and offsets at their defaults.
CaseSpec make_case(std::string family, int64_t M, int64_t N, int64_t K, int64_t block_size,
                   DType dtype, bool bias, bool exact = false, uint64_t seed = 1);

struct CaseInputs {
  std::vector<uint16_t> A;     // [M, K]
  ref::QuantizedWeight W;      // packed B, weight_scale, weight_scale_2
  std::vector<uint16_t> bias;  // [N] or empty
};

// Deterministic in the spec (seed included); the spec's value class, if
// any, injected last (inject_value_class).
CaseInputs make_inputs(const CaseSpec& spec);

// Each operand's address modulo 16 as run_case placed it: what the dispatcher
// and the kernels saw, so a family can show it reached an alignment class.
struct AddressClasses {
  uint32_t A = 0, B = 0, weight_scale = 0, weight_scale_2 = 0, bias = 0, Y = 0, scratch = 0;
};

struct CaseRun {
  Decision decision;
  AddressClasses addresses;
  std::vector<uint16_t> Y;        // [M, N]
  std::vector<uint16_t> scratch;  // [N, K] for the prefill routes, else empty
  std::size_t damaged_guard_bytes = 0;
  std::string y_sha256;  // tensor digest of Y (dtype, shape, bytes)
};

// Uploads the inputs, runs the operator once, downloads Y (and the scratch).
// Throws what run_matmul throws.
CaseRun run_case(nvh::Backend& backend, const CaseSpec& spec, const CaseInputs& inputs);

// The checks. Each returns "" when it holds, else what failed, with values.
struct Oracle {
  std::vector<uint16_t> W;  // reference dequant [N, K]
  std::vector<double> y64;  // reference fp64 output (with W)
  std::vector<uint16_t> y_rounded;
  bool exact = false;  // analyze_exactness on (A, W, bias); exact-mode cases only
  std::string exact_why;
  std::vector<ref::SumOutcome> outcomes;  // each element's order-independent outcome, [M, N]
};
Oracle make_oracle(const CaseSpec& spec, const CaseInputs& inputs);

std::string check_scratch(const CaseRun& run, const Oracle& oracle);
// Every element: a NaN is 0x7FFF; an element whose outcome is the same in
// every summation order (NaN, an infinity, or an exact finite part: DESIGN.md,
// "Special values") has exactly the reference's bits; any other is within a
// stated bound of the fp64 reference (an infinity where the bound reaches
// the dtype's overflow threshold; anything where fp32 may overflow).
std::string check_output_bound(const CaseSpec& spec, const CaseInputs& inputs, const CaseRun& run,
                               const Oracle& oracle);
std::string check_output_exact(const CaseRun& run, const Oracle& oracle);
std::string check_guards(const CaseRun& run);
// Inputs must not be all zero (a zero comparison proves nothing), nor the
// output where the reference is not.
std::string check_nonzero(const CaseSpec& spec, const CaseInputs& inputs, const CaseRun& run,
                          const Oracle& oracle);

}  // namespace nvfp4
