// What the route-coverage gate demands of the NVFP4 operator: every route and
// every dispatcher reason (dispatch.h), "forced" for the routes tests force,
// every case family on one of its target routes, and which routes this
// machine cannot run (hardware-gated, with the missing capability named).
#pragma once

#include "harness/backend.h"
#include "harness/route_gate.h"

namespace nvfp4 {

nvh::GateDeclaration gate_declaration();
nvh::HardwareGates hardware_gates(const nvh::Backend& backend);

}  // namespace nvfp4
