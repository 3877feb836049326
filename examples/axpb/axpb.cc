#include "axpb.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "axpb_scalar.h"
#include "axpb_vec4.h"
#include "harness/launch.h"
#include "harness/route_record.h"

namespace axpb {

const std::vector<RouteRow>& route_table() {
  static const std::vector<RouteRow> rows = {
      {Route::vec4, "vec4", {"aligned_multiple_of_4"}},
      {Route::scalar, "scalar", {"n_not_multiple_of_4", "not_16_byte_aligned"}},
  };
  return rows;
}

// Row i is for Route i, so the table is the one place a route's name is written.
const char* route_name(Route route) {
  return route_table().at(static_cast<std::size_t>(route)).name;
}

Decision select_route(const Args& args) {
  if (args.n % 4 != 0) return {Route::scalar, "n_not_multiple_of_4"};
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  if (!aligned(args.x) || !aligned(args.y)) return {Route::scalar, "not_16_byte_aligned"};
  return {Route::vec4, "aligned_multiple_of_4"};
}

Decision run(nvh::Backend& backend, const Args& args) {
  if (args.n < 0)
    throw std::invalid_argument("axpb::run: n = " + std::to_string(args.n) + ": must be >= 0");
  if (args.n > 0 && (!args.x || !args.y))
    throw std::invalid_argument(std::string("axpb::run: ") + (args.x ? "y" : "x") + " is null");
  const Decision d = select_route(args);
  nvh::RouteRecorder::global().record({"axpb",
                                       route_name(d.route),
                                       "",
                                       d.reason,
                                       backend.name(),
                                       backend.arch(),
                                       "",
                                       "",
                                       {{"n", std::to_string(args.n)}}});
  if (args.n == 0) return d;
  if (d.route == Route::vec4) {
    const char* fault = std::getenv("AXPB_INJECT_FAULT");
    const Vec4Kernel::Params p{args.x, args.y, args.n / 4,
                               args.a, args.b, fault && std::strcmp(fault, "vec4_drops_last") == 0};
    nvh::launch<Vec4Kernel>(backend, Vec4Kernel::shape(p), p);
  } else {
    const ScalarKernel::Params p{args.x, args.y, args.n, args.a, args.b};
    nvh::launch<ScalarKernel>(backend, ScalarKernel::shape(p), p);
  }
  backend.synchronize();
  return d;
}

}  // namespace axpb
