// Packed layout: low nibble = even k, odd K pads each row's last byte with a 0 high nibble.
#include "packing.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "test_util.h"

namespace nvfp4::ref {
namespace {

using testing::invalid_argument_message;

// Deterministic codes covering all 16 values in varying positions.
std::vector<uint8_t> sample_codes(int64_t N, int64_t K) {
  std::vector<uint8_t> codes(static_cast<std::size_t>(N * K));
  for (std::size_t i = 0; i < codes.size(); ++i)
    codes[i] = static_cast<uint8_t>((i * 7 + i / 5) % 16);
  return codes;
}

TEST(Packing, RowBytesIsCeilHalfK) {
  EXPECT_EQ(packed_row_bytes(0), 0);
  EXPECT_EQ(packed_row_bytes(1), 1);
  EXPECT_EQ(packed_row_bytes(2), 1);
  EXPECT_EQ(packed_row_bytes(3), 2);
  EXPECT_EQ(packed_row_bytes(std::numeric_limits<int64_t>::max()), int64_t{1} << 62);
}

TEST(Packing, LowNibbleHoldsEvenK) {
  // Row 0: k = 0..3 -> codes 1, 2, 3, 4; row 1: 0xF, 0x8, 0x0, 0x7.
  const std::vector<uint8_t> codes = {1, 2, 3, 4, 0xF, 0x8, 0x0, 0x7};
  EXPECT_EQ(pack_e2m1_rows(codes, 2, 4), (std::vector<uint8_t>{0x21, 0x43, 0x8F, 0x70}));
}

TEST(Packing, OddKPadsEachRowWithAZeroHighNibble) {
  const std::vector<uint8_t> codes = {0xF, 0xF, 0xF, 0x9, 0x9, 0x9};  // [2, 3]
  EXPECT_EQ(pack_e2m1_rows(codes, 2, 3), (std::vector<uint8_t>{0xFF, 0x0F, 0x99, 0x09}));
}

TEST(Packing, RoundTripsEveryShapeAroundTheEdges) {
  for (int64_t N : {0, 1, 2, 5}) {
    for (int64_t K : {0, 1, 2, 3, 15, 16, 17, 33}) {
      const std::vector<uint8_t> codes = sample_codes(N, K);
      const std::vector<uint8_t> packed = pack_e2m1_rows(codes, N, K);
      ASSERT_EQ(packed.size(), static_cast<std::size_t>(N * packed_row_bytes(K)));
      ASSERT_EQ(unpack_e2m1_rows(packed, N, K), codes) << N << "x" << K;
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t k = 0; k < K; ++k)
          ASSERT_EQ(packed_code_at(packed.data(), K, n, k), codes[n * K + k]);
        if (K % 2 == 1) {
          ASSERT_EQ(packed[n * packed_row_bytes(K) + K / 2] >> 4, 0) << "pad nibble";
        }
      }
    }
  }
}

// The pad nibble is not part of any value: readers ignore it rather than reject it.
TEST(Packing, UnpackIgnoresThePadNibble) {
  EXPECT_EQ(unpack_e2m1_rows({0xA3}, 1, 1), (std::vector<uint8_t>{0x3}));
}

TEST(Packing, PackRejectsBadArguments) {
  EXPECT_EQ(invalid_argument_message([] { pack_e2m1_rows({}, -1, 2); }),
            "pack_e2m1_rows: N = -1: must be non-negative");
  EXPECT_EQ(invalid_argument_message([] { pack_e2m1_rows({}, 1, -2); }),
            "pack_e2m1_rows: K = -2: must be non-negative");
  EXPECT_EQ(invalid_argument_message([] {
              pack_e2m1_rows({1, 2, 3, 4, 5}, 2, 3);
            }),
            "pack_e2m1_rows: codes.size() = 5: must be N*K = 6");
  EXPECT_EQ(invalid_argument_message([] {
              pack_e2m1_rows({1, 2, 3, 16}, 2, 2);
            }),
            "pack_e2m1_rows: codes[1,1] = 16: must be an E2M1 code 0..15");
  EXPECT_EQ(
      invalid_argument_message([] { pack_e2m1_rows({}, int64_t{1} << 40, int64_t{1} << 40); }),
      "pack_e2m1_rows: N*K = 1099511627776*1099511627776: overflows a 64-bit product");
}

TEST(Packing, UnpackRejectsBadArguments) {
  EXPECT_EQ(invalid_argument_message([] { unpack_e2m1_rows({}, -1, 2); }),
            "unpack_e2m1_rows: N = -1: must be non-negative");
  EXPECT_EQ(invalid_argument_message([] { unpack_e2m1_rows({}, 1, -2); }),
            "unpack_e2m1_rows: K = -2: must be non-negative");
  EXPECT_EQ(invalid_argument_message([] {
              unpack_e2m1_rows({1, 2, 3}, 2, 3);
            }),
            "unpack_e2m1_rows: packed.size() = 3: must be N*ceil(K/2) = 4");
  EXPECT_EQ(
      invalid_argument_message([] { unpack_e2m1_rows({}, int64_t{1} << 40, int64_t{1} << 40); }),
      "unpack_e2m1_rows: N*K = 1099511627776*1099511627776: overflows a 64-bit product");
}

TEST(Packing, CodeAtRejectsBadArguments) {
  const uint8_t byte = 0x21;
  EXPECT_EQ(invalid_argument_message([&] { packed_code_at(&byte, -1, 0, 0); }),
            "packed_code_at: K = -1: must be non-negative");
  EXPECT_EQ(invalid_argument_message([&] { packed_code_at(&byte, 2, -1, 0); }),
            "packed_code_at: n = -1: must be non-negative");
  EXPECT_EQ(invalid_argument_message([&] { packed_code_at(&byte, 2, 0, 2); }),
            "packed_code_at: k = 2: must be in [0, K = 2)");
  EXPECT_EQ(invalid_argument_message([&] { packed_code_at(&byte, 2, 0, -1); }),
            "packed_code_at: k = -1: must be in [0, K = 2)");
  EXPECT_EQ(invalid_argument_message([&] { packed_code_at(nullptr, 2, 0, 0); }),
            "packed_code_at: packed = nullptr: must point to the packed rows");
  EXPECT_EQ(invalid_argument_message([&] { packed_code_at(&byte, 4, int64_t{1} << 62, 0); }),
            "packed_code_at: n*ceil(K/2) = 4611686018427387904*2: overflows a 64-bit product");
  // n * 3 = INT64_MAX - 1 fits; adding k/2 = 2 does not.
  EXPECT_EQ(invalid_argument_message([&] { packed_code_at(&byte, 6, 3074457345618258602, 5); }),
            "packed_code_at: n*ceil(K/2)+k/2 = 9223372036854775806+2: overflows a 64-bit sum");
}

}  // namespace
}  // namespace nvfp4::ref
