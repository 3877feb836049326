// A test-only kernel for ldmatrix_x4 (kernel_ctx.h): one warp fills four
// 8 x 8 matrices of 16-bit values in shared memory, rows `row_stride` bytes
// apart and matrices `matrix_stride` bytes apart (as a swizzled tile puts
// them), then every lane names its row (row l % 8 of matrix l / 8) and
// stores what ldmatrix_x4 gives it, plain and transposed. `row_offset` is
// added to lane `odd_lane`'s row address (the memcheck test's bad row).
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"

namespace nvh {
namespace test_kernels {

struct LdmatrixRows {
  struct Params {
    uint32_t* out;  // [32 lanes][8]: the four plain registers, then the four transposed
    uint32_t row_stride, matrix_stride;
    uint32_t odd_lane;
    int32_t row_offset;
  };
  static constexpr uint32_t kMaxBlockThreads = 32;

  // Matrix i's element (row, column): distinct for every element.
  NVH_HD static uint16_t value(uint32_t i, uint32_t row, uint32_t column) {
    return static_cast<uint16_t>(0x100 * (i + 1) + 0x10 * row + column);
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    uint8_t* shared = ctx.template shared_mem<uint8_t>();
    const uint32_t l = ctx.lane();
    for (uint32_t e = l; e < 4 * 64; e += 32) {  // matrix e / 64, row e / 8 % 8, column e % 8
      const uint32_t i = e / 64, row = e / 8 % 8, column = e % 8;
      store_u16(reinterpret_cast<uint16_t*>(shared + i * p.matrix_stride + row * p.row_stride +
                                            2 * column),
                value(i, row, column));
    }
    ctx.sync_warp();
    const uint8_t* row = shared + (l / 8) * p.matrix_stride + (l % 8) * p.row_stride +
                         (l == p.odd_lane ? p.row_offset : 0);
    uint32_t plain[4], transposed[4];
    ctx.template ldmatrix_x4<false>(plain, row);
    ctx.template ldmatrix_x4<true>(transposed, row);
    for (int r = 0; r < 4; ++r) {
      store_u32(p.out + 8 * l + r, plain[r]);
      store_u32(p.out + 8 * l + 4 + r, transposed[r]);
    }
  }
};

}  // namespace test_kernels
}  // namespace nvh
