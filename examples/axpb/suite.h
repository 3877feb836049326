// axpb as an operator suite (harness/operator_suite.h): three families, one
// aimed at each way the dispatcher decides, each case named
// "n<N>_off<OFFSET>_s<SEED>" (the name is the case: it parses back).
#pragma once

#include <cstdint>
#include <string>

#include "harness/operator_suite.h"

namespace axpb {

struct Case {
  int64_t n = 0;
  int offset = 0;  // x and y start this many floats past a 16-byte boundary (0 to 3)
  uint64_t seed = 0;
  std::string name() const;
};
// Throws std::invalid_argument naming the text and what is wrong.
Case parse_case(const std::string& name);

const nvh::OperatorSuite& axpb_suite();

}  // namespace axpb
