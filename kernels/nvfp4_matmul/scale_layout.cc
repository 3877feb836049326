#include "kernels/nvfp4_matmul/scale_layout.h"

#include <stdexcept>
#include <string>

namespace nvfp4 {
namespace {

void check_shape(const char* fn, int64_t rows, int64_t cols) {
  if (rows < 0)
    throw std::invalid_argument(std::string(fn) + ": rows = " + std::to_string(rows) +
                                ": negative");
  if (cols < 0)
    throw std::invalid_argument(std::string(fn) + ": cols = " + std::to_string(cols) +
                                ": negative");
}

}  // namespace

std::vector<uint8_t> swizzle_scales_to_tiled(const uint8_t* row_major, int64_t rows, int64_t cols) {
  constexpr const char* fn = "swizzle_scales_to_tiled";
  check_shape(fn, rows, cols);
  if (rows * cols > 0 && row_major == nullptr) {
    throw std::invalid_argument(std::string(fn) + ": row_major = null with " +
                                std::to_string(rows * cols) + " scales");
  }
  std::vector<uint8_t> tiled(static_cast<std::size_t>(tiled_scale_bytes(rows, cols)), 0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c)
      tiled[tiled_scale_offset(r, c, cols)] = row_major[r * cols + c];
  }
  return tiled;
}

std::vector<uint8_t> unswizzle_scales_from_tiled(const std::vector<uint8_t>& tiled, int64_t rows,
                                                 int64_t cols) {
  constexpr const char* fn = "unswizzle_scales_from_tiled";
  check_shape(fn, rows, cols);
  const int64_t want = tiled_scale_bytes(rows, cols);
  if (static_cast<int64_t>(tiled.size()) != want) {
    throw std::invalid_argument(std::string(fn) +
                                ": tiled.size() = " + std::to_string(tiled.size()) + ": expected " +
                                std::to_string(want));
  }
  std::vector<uint8_t> out(static_cast<std::size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = tiled[tiled_scale_offset(r, c, cols)];
  }
  return out;
}

}  // namespace nvfp4
