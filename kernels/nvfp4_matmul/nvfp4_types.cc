#include "kernels/nvfp4_matmul/nvfp4_types.h"

#include <stdexcept>

#include "kernels/nvfp4_matmul/route_table.h"

namespace nvfp4 {

const char* dtype_name(DType t) { return t == DType::fp16 ? "fp16" : "bf16"; }

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "fp16") return DType::fp16;
  if (name == "bf16") return DType::bf16;
  return std::nullopt;
}

const char* elem_type_name(ElemType t) {
  switch (t) {
    case ElemType::fp16:
      return "fp16";
    case ElemType::bf16:
      return "bf16";
    case ElemType::fp32:
      return "fp32";
    case ElemType::e2m1x2:
      return "e2m1x2";
    case ElemType::e4m3:
      return "e4m3";
  }
  return "?";  // LCOV_EXCL_LINE: unreachable, every ElemType returns above (-Wreturn-type wants it)
}

const char* route_name(Route r) { return route_row(r).name; }

std::optional<Route> parse_route(std::string_view name) {
  for (const RouteRow& row : route_table()) {
    if (name == row.name) return row.route;
  }
  return std::nullopt;
}

int64_t ceil_div(int64_t a, int64_t b) {
  if (a < 0)
    throw std::invalid_argument("ceil_div: a = " + std::to_string(a) + ": must not be negative");
  if (b <= 0)
    throw std::invalid_argument("ceil_div: b = " + std::to_string(b) + ": must be positive");
  return a / b + (a % b != 0 ? 1 : 0);
}

int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t out = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &out)) {
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(a) + " * " +
                                std::to_string(b) + " overflows a 64-bit element count");
  }
  return out;
}

}  // namespace nvfp4
