// axpb: y[i] = a * x[i] + b over fp32, rounded once (a fused multiply-add).
// A small operator put under nvfp4-harness from outside its tree, to show what
// an operator provides: routes, kernels, a reference, a suite (suite.h).
//
// Two routes, in dispatch order (route_table() is the one list):
//   vec4    n % 4 == 0 and x, y 16-byte aligned: four elements per thread, 16-byte loads;
//   scalar  everything else: one element per thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/backend.h"

namespace axpb {

struct Args {
  const float* x;  // [n], backend memory
  float* y;        // [n], backend memory
  int64_t n;
  float a, b;
};

enum class Route { vec4, scalar };

struct Decision {
  Route route;
  const char* reason;  // a reason code of the route's row
};

struct RouteRow {
  Route route;
  const char* name;
  std::vector<std::string> reasons;  // every reason the dispatcher may take it for
};
const std::vector<RouteRow>& route_table();
const char* route_name(Route route);

// The dispatcher: allocation-free, from the problem alone.
Decision select_route(const Args& args);

// Runs y = a * x + b on the backend by the route select_route picks, and
// records the launch (nvh::RouteRecorder: op "axpb", the route, its reason).
// Throws std::invalid_argument naming the value for n < 0 or a null operand.
// AXPB_INJECT_FAULT=vec4_drops_last in the environment makes the vec4 route
// leave the last element unwritten: the fault the example's CI test shows
// verify catching.
Decision run(nvh::Backend& backend, const Args& args);

}  // namespace axpb
