// A failing verify case, made self-contained: under <out>/repro/<case name>/
//   inputs.safetensors  the case's inputs, with the tensor names
//                       `nvfp4-harness run --inputs` reads (tensor_file.h)
//   repro.json          the case, family, route, backend, arch, seed, the
//                       expected and the got SHA-256 of Y, and what failed
//   README.txt          the commands that rerun it
// The inputs are rebuilt from the case's spec (make_inputs is deterministic
// in it), so a case whose worker crashed gets its repro too.
#pragma once

#include <cstdint>
#include <string>

#include "properties/nvfp4_matmul/matmul_case.h"

namespace nvfp4 {

struct ReproInfo {
  std::string route;    // the route the case took ("" when its worker crashed before saying)
  std::string backend;  // "host" or "cuda", as --backend takes it
  std::string arch;     // "host", "sm_90"
  uint64_t seed = 1;    // verify's --seed
  std::string expected_sha256;  // what Y should hash to
  std::string expected_from;    // where that digest comes from
  std::string got_sha256;       // what it hashed to ("" when the case gave no output)
  std::string detail;           // what failed
};

// The digest of the reference's output rounded to the dtype, and where it
// comes from: for an exact case every route must give these bits; for any
// other case it is the nearest answer, not a demand (the contract allows
// rounding differences within a bound).
struct ExpectedDigest {
  std::string sha256;
  std::string from;
};
ExpectedDigest reference_digest(const CaseSpec& spec, const CaseInputs& inputs);

// Writes the repro folder for `spec` under out_dir and returns its path.
// Throws what the file writes throw.
std::string write_repro(const std::string& out_dir, const CaseSpec& spec, const ReproInfo& info);

}  // namespace nvfp4
