#include "kernels/nvfp4_matmul/nvfp4_types.h"

#include <gtest/gtest.h>

#include <climits>
#include <stdexcept>
#include <string>

namespace nvfp4 {
namespace {

std::string ceil_div_error(int64_t a, int64_t b) {
  try {
    ceil_div(a, b);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(CeilDiv, RoundsUp) {
  EXPECT_EQ(ceil_div(0, 16), 0);
  EXPECT_EQ(ceil_div(1, 16), 1);
  EXPECT_EQ(ceil_div(16, 16), 1);
  EXPECT_EQ(ceil_div(17, 16), 2);
  EXPECT_EQ(ceil_div(4100, 2), 2050);
}

// (a + b - 1) / b overflowed here into negative quotients.
TEST(CeilDiv, DoesNotOverflowNearInt64Max) {
  EXPECT_EQ(ceil_div(INT64_MAX, 2), int64_t{1} << 62);
  EXPECT_EQ(ceil_div(INT64_MAX - 1, 2), (int64_t{1} << 62) - 1);
  EXPECT_EQ(ceil_div(32, INT64_MAX), 1);
  EXPECT_EQ(ceil_div(INT64_MAX, INT64_MAX), 1);
  EXPECT_EQ(ceil_div(INT64_MAX, 1), INT64_MAX);
}

TEST(CeilDiv, NamesANegativeDividendOrANonPositiveDivisor) {
  EXPECT_EQ(ceil_div_error(-1, 16), "ceil_div: a = -1: must not be negative");
  EXPECT_EQ(ceil_div_error(16, 0), "ceil_div: b = 0: must be positive");
  EXPECT_EQ(ceil_div_error(16, INT64_MIN), "ceil_div: b = -9223372036854775808: must be positive");
}

}  // namespace
}  // namespace nvfp4
