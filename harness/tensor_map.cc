#include "harness/tensor_map.h"

#include <stdexcept>
#include <string>

namespace nvh {

namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw std::invalid_argument("make_tensor_map_2d: " + what);
}

}  // namespace

TensorMap2d make_tensor_map_2d(const void* base, uint32_t elem_bytes, uint64_t rows, uint64_t cols,
                               uint64_t row_bytes, uint32_t box_rows, uint32_t box_cols,
                               TmaSwizzle swizzle) {
  const auto at = reinterpret_cast<uintptr_t>(base);
  if (base == nullptr || at % 16 != 0) {
    refuse("base " + std::to_string(at) + " is not a 16-byte aligned address");
  }
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4) {
    refuse("elem_bytes " + std::to_string(elem_bytes) + " is not 1, 2 or 4");
  }
  constexpr uint64_t kMaxDim = uint64_t{1} << 32, kMaxStride = uint64_t{1} << 40;
  if (rows == 0 || rows > kMaxDim) refuse("rows " + std::to_string(rows) + " is not 1 to 2^32");
  if (cols == 0 || cols > kMaxDim) refuse("cols " + std::to_string(cols) + " is not 1 to 2^32");
  if (row_bytes % 16 != 0 || row_bytes >= kMaxStride) {
    refuse("row_bytes " + std::to_string(row_bytes) +
           " is not a multiple of 16 below 2^40 (the TMA's stride rule)");
  }
  if (rows > 1 && row_bytes < cols * elem_bytes) {
    refuse("row_bytes " + std::to_string(row_bytes) + " is shorter than a row's " +
           std::to_string(cols * elem_bytes) + " bytes");
  }
  if (box_rows == 0 || box_rows > 256) {
    refuse("box_rows " + std::to_string(box_rows) + " is not 1 to 256");
  }
  if (box_cols == 0 || box_cols > 256) {
    refuse("box_cols " + std::to_string(box_cols) + " is not 1 to 256");
  }
  const uint64_t box_row_bytes = uint64_t{box_cols} * elem_bytes;
  if (box_row_bytes % 16 != 0) {
    refuse("box_cols " + std::to_string(box_cols) + " makes a box row of " +
           std::to_string(box_row_bytes) + " bytes, not a multiple of 16");
  }
  const uint64_t widest = swizzle == TmaSwizzle::b128 ? 128 : swizzle == TmaSwizzle::b64 ? 64 : 0;
  if (widest && box_row_bytes > widest) {
    refuse("box_cols " + std::to_string(box_cols) + " makes a box row of " +
           std::to_string(box_row_bytes) + " bytes, past the " + std::to_string(widest) +
           "-byte swizzle's " + std::to_string(widest));
  }
  // `encoded` zeroed: the CUDA backend writes it at launch.
  return TensorMap2d{{}, base, cols, rows, row_bytes, box_cols, box_rows, elem_bytes, swizzle};
}

}  // namespace nvh
