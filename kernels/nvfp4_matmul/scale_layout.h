// The block-scale layout cuBLASLt's block-scaled matmul reads
// (CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3, one E4M3 byte per 16 values
// along K): "128x4 tiles".
//
// For an operand with R rows (its outer, non-K dimension) and C = K/16 scale
// columns, the scale matrix is padded to a multiple of 128 rows and 4 columns
// (padding bytes zero) and cut into 128x4 tiles of 512 bytes each, stored
// tile-row by tile-row:
//   tile   = (r / 128) * ceil(C / 4) + (c / 4)
//   inside = (r % 32) * 16 + ((r % 128) / 32) * 4 + (c % 4)
// i.e. inside a tile, the four 32-row groups of one 16-byte line are rows
// r, r + 32, r + 64, r + 96, each contributing its 4 scale columns.
//
// Sources read for this rule (its text, not its code):
//   * cuBLAS documentation, "1D Block Scaling Factors Layout"
//     (docs.nvidia.com/cuda/cublas/index.html#d-block-scaling-factors-layout),
//     as cited by every implementation below;
//   * nvmath-python's helpers.matmul.get_block_scale_offset page, whose worked
//     example (a 128x128 NVFP4 operand: scale (5, 2) at offset 82, scale
//     (5, 5) at 593) is one of this layout's tests;
//   * the cuDNN frontend note "MXFP8 scale factor 128x4 layout" and
//     TransformerEngine's swizzle.h ("padded to 128x4 for row-scale").
#pragma once

#include <cstdint>
#include <vector>

#include "harness/kernel_ctx.h"

namespace nvfp4 {

inline constexpr int64_t kScaleTileRows = 128;
inline constexpr int64_t kScaleTileCols = 4;
inline constexpr int64_t kScaleTileBytes = kScaleTileRows * kScaleTileCols;  // 512

// Bytes of the tiled buffer for an [R, C] scale matrix, padding included.
NVH_HD NVH_INLINE int64_t tiled_scale_bytes(int64_t rows, int64_t cols) {
  const int64_t row_tiles = (rows + kScaleTileRows - 1) / kScaleTileRows;
  const int64_t col_tiles = (cols + kScaleTileCols - 1) / kScaleTileCols;
  return row_tiles * col_tiles * kScaleTileBytes;
}

// Where scale (r, c) of a matrix with `cols` scale columns lives in the tiled
// buffer. Also valid for (r, c) in the padding.
NVH_HD NVH_INLINE int64_t tiled_scale_offset(int64_t r, int64_t c, int64_t cols) {
  const int64_t col_tiles = (cols + kScaleTileCols - 1) / kScaleTileCols;
  const int64_t tile = (r / kScaleTileRows) * col_tiles + c / kScaleTileCols;
  const int64_t inside = (r % 32) * 16 + ((r % kScaleTileRows) / 32) * 4 + c % kScaleTileCols;
  return tile * kScaleTileBytes + inside;
}

// The inverse: the (row, column) whose scale sits at `offset`; a padding byte
// gives a row >= R or a column >= C.
NVH_HD NVH_INLINE void tiled_scale_coords(int64_t offset, int64_t cols, int64_t* r, int64_t* c) {
  const int64_t col_tiles = (cols + kScaleTileCols - 1) / kScaleTileCols;
  const int64_t tile = offset / kScaleTileBytes, inside = offset % kScaleTileBytes;
  *r = (tile / col_tiles) * kScaleTileRows + ((inside % 16) / 4) * 32 + inside / 16;
  *c = (tile % col_tiles) * kScaleTileCols + inside % 4;
}

// Row-major [rows, cols] scales to the tiled buffer (tiled_scale_bytes long,
// padding zero). Throws std::invalid_argument for negative sizes or a null
// pointer with elements.
std::vector<uint8_t> swizzle_scales_to_tiled(const uint8_t* row_major, int64_t rows, int64_t cols);

// The tiled buffer back to row-major [rows, cols] (the padding is dropped).
std::vector<uint8_t> unswizzle_scales_from_tiled(const std::vector<uint8_t>& tiled, int64_t rows,
                                                 int64_t cols);

}  // namespace nvfp4
