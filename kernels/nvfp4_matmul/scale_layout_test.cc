// The cuBLASLt 128x4 scale layout against rules written out independently of
// scale_layout.h: a worked example from NVIDIA's documentation, entries
// derived by hand, a nested-array formulation, and the inverse mapping.
#include "kernels/nvfp4_matmul/scale_layout.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <vector>

namespace nvfp4 {
namespace {

// nvmath-python's get_block_scale_offset documentation: a 128x128 NVFP4
// operand (8 scale columns) keeps scale (5, 2) at offset 82 and (5, 5) at 593.
TEST(ScaleLayout, MatchesTheDocumentedWorkedExample) {
  EXPECT_EQ(tiled_scale_offset(5, 2, 8), 82);
  EXPECT_EQ(tiled_scale_offset(5, 5, 8), 593);
}

// A 256x8 scale matrix: 2 x 2 tiles of 512 bytes. Each entry derived by hand
// from the rule text: tile (r/128, c/4) row-major over 2 tile columns; inside,
// 16 bytes per (r % 32), then 4 per 32-row group, then c % 4.
TEST(ScaleLayout, HandDerivedEntriesFor256x8) {
  struct Entry {
    int64_t r, c, offset;
  };
  const Entry table[] = {
      {0, 0, 0},      {0, 1, 1},      {0, 3, 3},      {0, 4, 512},    {0, 7, 515},
      {1, 0, 16},     {31, 0, 496},   {31, 3, 499},   {32, 0, 4},     {33, 2, 22},
      {64, 1, 9},     {96, 0, 12},    {127, 3, 511},  {127, 7, 1023}, {128, 0, 1024},
      {128, 4, 1536}, {160, 1, 1029}, {200, 5, 1673}, {255, 3, 1535}, {255, 7, 2047},
  };
  for (const Entry& e : table)
    EXPECT_EQ(tiled_scale_offset(e.r, e.c, 8), e.offset) << "(" << e.r << ", " << e.c << ")";
  EXPECT_EQ(tiled_scale_bytes(256, 8), 2048);
}

// The first 16-byte line of a tile holds rows 0, 32, 64, 96, each with its 4
// columns: byte j is (row (j / 4) * 32, column j % 4).
TEST(ScaleLayout, FirstLineOfATileInterleavesTheFourRowGroups) {
  const int64_t rows[16] = {0, 0, 0, 0, 32, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 96};
  const int64_t cols[16] = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
  for (int64_t j = 0; j < 16; ++j) {
    EXPECT_EQ(tiled_scale_offset(rows[j], cols[j], 4), j);
    int64_t r = -1, c = -1;
    tiled_scale_coords(j, 4, &r, &c);
    EXPECT_EQ(r, rows[j]);
    EXPECT_EQ(c, cols[j]);
  }
}

// The same layout as a nested array [row_tiles][col_tiles][32][4][4]
// indexed by (r / 128, c / 4, r % 32, (r % 128) / 32, c % 4).
int64_t nested_offset(int64_t r, int64_t c, int64_t col_tiles) {
  const int64_t rb = r / 128, cb = c / 4, r32 = r % 32, group = (r % 128) / 32, c4 = c % 4;
  return (((rb * col_tiles + cb) * 32 + r32) * 4 + group) * 4 + c4;
}

TEST(ScaleLayout, AgreesWithTheNestedArrayFormulation) {
  for (int64_t cols : {1, 3, 4, 5, 8, 13}) {
    const int64_t col_tiles = (cols + 3) / 4;
    for (int64_t r = 0; r < 300; ++r) {
      for (int64_t c = 0; c < cols; ++c)
        ASSERT_EQ(tiled_scale_offset(r, c, cols), nested_offset(r, c, col_tiles));
    }
  }
}

// Over the padded matrix the offset is a bijection onto the buffer, and
// tiled_scale_coords is its inverse.
TEST(ScaleLayout, InverseMappingRoundTrips) {
  for (int64_t rows : {1, 5, 127, 128, 129, 300}) {
    for (int64_t cols : {1, 2, 4, 6, 9}) {
      const int64_t bytes = tiled_scale_bytes(rows, cols);
      const int64_t padded_rows = (rows + 127) / 128 * 128, padded_cols = (cols + 3) / 4 * 4;
      ASSERT_EQ(bytes, padded_rows * padded_cols);
      std::set<int64_t> seen;
      for (int64_t o = 0; o < bytes; ++o) {
        int64_t r = -1, c = -1;
        tiled_scale_coords(o, cols, &r, &c);
        ASSERT_LT(r, padded_rows);
        ASSERT_LT(c, padded_cols);
        ASSERT_EQ(tiled_scale_offset(r, c, cols), o) << rows << "x" << cols << " offset " << o;
        seen.insert(r * padded_cols + c);
      }
      EXPECT_EQ(static_cast<int64_t>(seen.size()), bytes);
    }
  }
}

std::vector<uint8_t> numbered(int64_t rows, int64_t cols) {
  std::vector<uint8_t> v(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(1 + i % 251);  // never 0
  return v;
}

TEST(ScaleLayout, SwizzlePlacesEveryScaleAndZeroesThePadding) {
  for (int64_t rows : {1, 40, 128, 200}) {
    for (int64_t cols : {1, 4, 7, 32}) {
      const std::vector<uint8_t> scales = numbered(rows, cols);
      const std::vector<uint8_t> tiled = swizzle_scales_to_tiled(scales.data(), rows, cols);
      ASSERT_EQ(static_cast<int64_t>(tiled.size()), tiled_scale_bytes(rows, cols));
      std::vector<bool> used(tiled.size(), false);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const int64_t o = nested_offset(r, c, (cols + 3) / 4);
          ASSERT_EQ(tiled[o], scales[r * cols + c]);
          used[o] = true;
        }
      }
      for (std::size_t o = 0; o < tiled.size(); ++o) {
        if (!used[o]) {
          ASSERT_EQ(tiled[o], 0) << "padding byte " << o << " of " << rows << "x" << cols;
        }
      }
      EXPECT_EQ(unswizzle_scales_from_tiled(tiled, rows, cols), scales);
    }
  }
}

TEST(ScaleLayout, EmptyMatricesHaveNoTiles) {
  EXPECT_EQ(tiled_scale_bytes(0, 8), 0);
  EXPECT_EQ(tiled_scale_bytes(8, 0), 0);
  EXPECT_TRUE(swizzle_scales_to_tiled(nullptr, 0, 8).empty());
}

TEST(ScaleLayout, BadArgumentsAreNamed) {
  const std::vector<uint8_t> one(1);
  EXPECT_THROW(swizzle_scales_to_tiled(one.data(), -1, 1), std::invalid_argument);
  EXPECT_THROW(swizzle_scales_to_tiled(nullptr, 2, 2), std::invalid_argument);
  try {
    unswizzle_scales_from_tiled(one, 1, 1);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tiled.size() = 1: expected 512"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nvfp4
