// Named lists of cases for hash manifests: fixed shapes and seeds, so a
// manifest written today can be recomputed and compared tomorrow.
#pragma once

#include <string>
#include <vector>

#include "properties/nvfp4_matmul/matmul_case.h"

namespace nvfp4 {

// The names `list_names()` gives; throws std::invalid_argument naming an unknown one.
std::vector<CaseSpec> named_case_list(const std::string& name);
std::vector<std::string> list_names();

}  // namespace nvfp4
