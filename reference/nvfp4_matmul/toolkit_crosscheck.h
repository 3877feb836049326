// reference/nvfp4_matmul/toolkit_crosscheck.h -- verification level 1 (DESIGN.md): the reference's
// primitive conversions against the CUDA toolkit's own host-callable ones (cuda_fp4.h, cuda_fp8.h,
// cuda_fp16.h, cuda_bf16.h). The reference is written from the format definition; the toolkit
// is an independent implementation, so agreement on every input is evidence for both.
//
// This header is pure C++ (a CLI can print the report without the toolkit headers); only
// toolkit_crosscheck.cc includes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvfp4::ref {

struct PrimitiveCheck {
  std::string name;      // what is compared with which toolkit function
  int64_t compared = 0;  // inputs compared
  int64_t mismatches = 0;
  int64_t skipped = 0;      // inputs outside this check's domain (see skip_reason)
  std::string skip_reason;  // "" when nothing is skipped
  std::vector<std::string> first_mismatches;  // the first few, one line each
};

struct PrimitiveReport {
  std::vector<PrimitiveCheck> checks;
  int64_t total_mismatches() const;
  const PrimitiveCheck* find(const std::string& name) const;  // nullptr if absent
  std::string to_text() const;  // one line per check, then the listed mismatches
};

// The names check_primitives() reports, in order.
extern const char* const kCheckE2m1ToFp16;
extern const char* const kCheckE2m1ToBf16;
extern const char* const kCheckE2m1ToBf16ViaFloat;
extern const char* const kCheckE4m3ToFp16;
extern const char* const kCheckE4m3ToFloat;
extern const char* const kCheckE4m3ToBf16;
extern const char* const kCheckFloatToE2m1;
extern const char* const kCheckFloatToE4m3;
extern const char* const kCheckFloatToFp16;
extern const char* const kCheckFloatToBf16;
extern const char* const kCheckDoubleToFp16;
extern const char* const kCheckDoubleToBf16;

// Runs every comparison (about a second: the encoder sweeps cover ~1.2M floats).
PrimitiveReport check_primitives();

}  // namespace nvfp4::ref
