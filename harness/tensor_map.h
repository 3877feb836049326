// A 2-D tensor map for the tensor memory accelerator (sm_90's TMA): which
// global matrix a kernel's tma_load_2d copies boxes of, and how a box lands
// in shared memory. The portable fields describe it on both backends; the
// CUDA backend encodes them into the opaque CUtensorMap (`encoded`) at
// launch (device_launch.cuh, encode_tensor_map), the host executor copies
// boxes from the fields (host_executor.h). A kernel takes it in its Params,
// which the GPU passes as a __grid_constant__ parameter, so the map's
// address is one the TMA unit may read.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"

namespace nvh {

// How a box's rows land in shared memory: densely, with the 128-byte
// swizzle (the 16-byte chunk at shared address a goes to chunk
// (a / 16) % 8 ^ (a / 128) % 8 of its 128 bytes), the layout wgmma reads
// (device_ctx.cuh), or with the 64-byte one ((a / 16) % 4 ^ (a / 128) % 4
// of its 64 bytes: rows of 64 bytes, 8 in a row two apart, fall on 8
// different bank groups).
enum class TmaSwizzle : uint8_t { none, b64, b128 };

// Where the TMA puts the byte the dense layout puts at shared address `at`
// (the rule above; wgmma's B tiles are read through the 128-byte one).
NVH_HD inline uintptr_t tma_swizzled(uintptr_t at, TmaSwizzle swizzle) {
  if (swizzle == TmaSwizzle::b128) return at ^ (((at >> 7) & 7u) << 4);
  if (swizzle == TmaSwizzle::b64) return at ^ (((at >> 7) & 3u) << 4);
  return at;
}
// The alignment a box's shared address needs: the swizzle's atom, or the
// TMA's 128 bytes.
NVH_HD inline uint32_t tma_box_alignment(TmaSwizzle swizzle) {
  return swizzle == TmaSwizzle::b128 ? 1024 : swizzle == TmaSwizzle::b64 ? 512 : 128;
}

struct alignas(128) TensorMap2d {
  // The CUtensorMap (128 bytes, aligned as cuda.h aligns it), written by the CUDA
  // backend at launch; the host executor does not read it.
  unsigned char encoded[128];
  const void* base;    // element (0, 0), 16-byte aligned
  uint64_t cols;       // elements a row (the inner dimension)
  uint64_t rows;       // rows
  uint64_t row_bytes;  // from one row to the next, a multiple of 16
  uint32_t box_cols;   // a box's elements a row: box_cols * elem_bytes a multiple of 16
  uint32_t box_rows;   // a box's rows, 1 to 256
  uint32_t elem_bytes;
  TmaSwizzle swizzle;

  NVH_HD uint32_t box_row_bytes() const { return box_cols * elem_bytes; }
  NVH_HD uint32_t box_bytes() const { return box_row_bytes() * box_rows; }
};

// A map of `rows` x `cols` elements of `elem_bytes` (1, 2 or 4) at `base`,
// rows `row_bytes` apart, copied in boxes of box_rows x box_cols. Throws
// std::invalid_argument naming the first value the TMA would refuse
// (cuTensorMapEncodeTiled's rules): base not 16-byte aligned, a dimension
// of 0 or past 2^32, a row stride not a multiple of 16 or past 2^40, a box
// dimension of 0 or past 256, a box row not a multiple of 16 bytes, or one
// wider than its swizzle (128 or 64 bytes).
TensorMap2d make_tensor_map_2d(const void* base, uint32_t elem_bytes, uint64_t rows, uint64_t cols,
                               uint64_t row_bytes, uint32_t box_rows, uint32_t box_cols,
                               TmaSwizzle swizzle);

}  // namespace nvh
