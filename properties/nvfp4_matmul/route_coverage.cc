#include "properties/nvfp4_matmul/route_coverage.h"

#include <algorithm>

#include "kernels/nvfp4_matmul/dispatch.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "properties/nvfp4_matmul/families.h"

namespace nvfp4 {

nvh::GateDeclaration gate_declaration() {
  nvh::GateDeclaration d{"nvfp4_matmul", {}, {}};
  for (const RouteRow& row : route_table()) {
    nvh::RouteDeclaration rd{row.name, route_reasons(row.route)};
    // The property suites force every cross-checked route (verify_case.cc).
    if (row.cross_checked) rd.reasons.emplace_back(kForcedReason);
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
  const Caps caps = device_caps(backend);
  for (const RouteRow& row : route_table()) {
    const std::string missing = row.missing_capability ? row.missing_capability(caps) : "";
    if (!missing.empty()) gates[row.name] = missing;
  }
  return gates;
}

}  // namespace nvfp4
