#include "properties/route_coverage.h"

#include <algorithm>

#include "kernels/dispatch.h"
#include "kernels/nvfp4_matmul.h"
#include "properties/families.h"

namespace nvfp4 {

nvh::GateDeclaration gate_declaration() {
  nvh::GateDeclaration d{"nvfp4_matmul", {}, {}};
  for (Route r : kAllRoutes) {
    nvh::RouteDeclaration rd{route_name(r), route_reasons(r)};
    // The property suites force every route that has something to compare with.
    if (r != Route::empty && r != Route::native_sm120) rd.reasons.push_back("forced");
    d.routes.push_back(rd);
  }
  for (const Family& f : all_families()) {
    nvh::FamilyDeclaration fd{f.name, {}};
    for (const RouteTarget& t : f.targets) {
      for (Route r : t.routes) {
        if (std::find(fd.routes.begin(), fd.routes.end(), route_name(r)) == fd.routes.end()) {
          fd.routes.push_back(route_name(r));
        }
      }
    }
    d.families.push_back(fd);
  }
  return d;
}

nvh::HardwareGates hardware_gates(const nvh::Backend& backend) {
  nvh::HardwareGates gates;
  const std::string missing = native_sm120_missing_capability(device_caps(backend));
  if (!missing.empty()) gates[route_name(Route::native_sm120)] = missing;
  return gates;
}

}  // namespace nvfp4
