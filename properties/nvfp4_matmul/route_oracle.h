// The route DESIGN.md's table promises for a case, written out here on its
// own (not by calling kernels/nvfp4_matmul/dispatch.cc), so that property (a) checks the
// dispatcher against the table and not against itself.
#pragma once

#include <string>

#include "kernels/nvfp4_matmul/nvfp4_types.h"
#include "properties/nvfp4_matmul/matmul_case.h"

namespace nvfp4 {

struct ExpectedRoute {
  Route route;
  std::string reason;
};

// `device` is what the case runs on (sm as 10*major+minor, and whether the
// block-scaled FP4 matmul is there); simulated caps in the spec replace it.
ExpectedRoute expected_route(const CaseSpec& spec, const Caps& device);

}  // namespace nvfp4
