// The NVFP4 matmul's tensors in a safetensors file (harness/safetensors.h):
// what `nvfp4-harness run --inputs FILE` reads, and what a failing verify
// case writes as its repro (properties/nvfp4_matmul/repro.h). The harness knows files of
// named tensors; this file knows which names the operator takes and what
// each must be.
//
//   A               [M, K]               F16 or BF16
//   B               [N, ceil(K/2)]       U8: packed E2M1, low nibble = even k
//   weight_scale    [N, ceil(K/bs)]      F8_E4M3 or U8: E4M3 bytes, row-major
//                                        (the operator's layout; native_sm120
//                                        retiles them itself)
//   weight_scale_2  [] or [1]            F32
//   bias            [N], optional        A's dtype
// and in "__metadata__", all optional: "block_size" (default 16, the NVFP4
// block), and the bytes each operand sits past a 256-byte boundary
// ("offset_A", "offset_B", "offset_weight_scale", "offset_weight_scale_2",
// "offset_bias", "offset_Y", "offset_scratch"; default 0), which a repro of
// an alignment case needs to take the same route.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/safetensors.h"
#include "properties/nvfp4_matmul/matmul_case.h"
#include "properties/nvfp4_matmul/verify_case.h"

namespace nvfp4 {

// The problem a file holds, as a case: spec (shape, dtype, bias, block
// size, offsets; family "inputs") and inputs.
struct TensorCase {
  CaseSpec spec;
  CaseInputs inputs;
};

// Throws std::invalid_argument "tensor_case_from: <source>: ..." naming the
// tensor and its bad value: a missing or unexpected tensor, a dtype or shape
// other than the table's, shapes that disagree (B's N with weight_scale's), a
// bad metadata value.
TensorCase tensor_case_from(const nvh::SafeTensorsFile& file, const std::string& source);
// read_safetensors (whose errors it passes on) then tensor_case_from.
TensorCase read_tensor_case(const std::string& path);

// The file for a case: its tensors, with block_size, the offsets that are
// not 0, and `extra` in the metadata. weight_scale is written as F8_E4M3.
nvh::SafeTensorsFile tensor_file_of(const CaseSpec& spec, const CaseInputs& inputs,
                                    const std::map<std::string, std::string>& extra = {});

// One route's run of a file's problem.
struct RouteRun {
  Route route = Route::empty;
  Outcome outcome = Outcome::ok;
  std::string detail;    // why it failed or is not supported; for OK how it was judged
  std::string y_sha256;  // tensor digest of Y; empty when it did not run
  std::vector<uint16_t> Y;
  bool natural = false;  // the route the dispatcher picks unforced
};

struct TensorRunReport {
  std::string reference_sha256;  // digest of the reference's rounded output
  bool exact = false;  // every element's sum exact: each route must give the reference's bits
  std::string exact_why;
  std::vector<RouteRun> runs;
  bool failed() const;  // a FAIL, or no route ran at all
};

// Runs the problem on every route (kAllRoutes order), or only `only`, each
// forced: a route whose preconditions the shape fails, or that this backend
// lacks, is NOT_SUPPORTED with the reason; one that runs is checked as a
// verify case is: the dequant scratch equal to the reference's, the guard
// bytes, every output element within the contract's bound of the fp64
// reference (exactly its bits where the order cannot matter), and, when the
// whole problem is exact, exactly the reference's bits.
TensorRunReport run_tensor_case(nvh::Backend& backend, const TensorCase& tensor_case,
                                std::optional<Route> only = {});

// One line per route: route, outcome, SHA-256 of Y (or -), detail.
std::string render_tensor_run(const TensorCase& tensor_case, const TensorRunReport& report);

// Y of each route that ran, as "Y.<route>"; with `single`, the one route's Y as "Y".
nvh::SafeTensorsFile outputs_file(const TensorCase& tensor_case, const TensorRunReport& report,
                                  bool single);

}  // namespace nvfp4
