// Every argument check the public entry points share, message by message.
#include "checks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "test_util.h"

namespace nvfp4::ref::detail {
namespace {

using nvfp4::ref::testing::invalid_argument_message;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

TEST(Checks, FailFormatsFunctionArgumentValueAndWhat) {
  EXPECT_EQ(invalid_argument_message([] { fail("f", "x", "3", "must be small"); }),
            "f: x = 3: must be small");
}

TEST(Checks, FloatTextNamesSpecialsAndKeepsNineDigits) {
  EXPECT_EQ(float_text(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(float_text(-std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(float_text(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(float_text(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(float_text(1.5), "1.5");
  EXPECT_EQ(float_text(-0.0), "-0");
  EXPECT_EQ(float_text(0.1f), "0.100000001");
}

TEST(Checks, ElementNameIsNameRowColumn) { EXPECT_EQ(element_name("W", 3, 17), "W[3,17]"); }

TEST(Checks, NonnegativeRejectsOnlyNegatives) {
  EXPECT_NO_THROW(check_nonnegative("f", "N", 0));
  EXPECT_EQ(invalid_argument_message([] { check_nonnegative("f", "N", -1); }),
            "f: N = -1: must be non-negative");
}

TEST(Checks, PositiveRejectsZeroAndNegatives) {
  EXPECT_NO_THROW(check_positive("f", "block_size", 1));
  EXPECT_EQ(invalid_argument_message([] { check_positive("f", "block_size", 0); }),
            "f: block_size = 0: must be positive");
  EXPECT_EQ(invalid_argument_message([] { check_positive("f", "block_size", -16); }),
            "f: block_size = -16: must be positive");
}

TEST(Checks, CheckedProductReportsOverflowWithBothFactors) {
  EXPECT_EQ(checked_product("f", "N", 3, "K", 5), 15);
  EXPECT_EQ(checked_product("f", "N", 0, "K", kInt64Max), 0);
  EXPECT_EQ(invalid_argument_message(
                [] { checked_product("f", "N", int64_t{1} << 32, "K", int64_t{1} << 31); }),
            "f: N*K = 4294967296*2147483648: overflows a 64-bit product");
}

TEST(Checks, CheckedSumReportsOverflow) {
  EXPECT_EQ(checked_sum("f", "a", 2, "b", 3), 5);
  EXPECT_EQ(invalid_argument_message([] { checked_sum("f", "a", kInt64Max, "b", 1); }),
            "f: a+b = 9223372036854775807+1: overflows a 64-bit sum");
}

TEST(Checks, CeilDivRoundsUpWithoutOverflow) {
  EXPECT_EQ(ceil_div(0, 16), 0);
  EXPECT_EQ(ceil_div(1, 16), 1);
  EXPECT_EQ(ceil_div(16, 16), 1);
  EXPECT_EQ(ceil_div(17, 16), 2);
  EXPECT_EQ(ceil_div(kInt64Max, 2), int64_t{1} << 62);  // (a + b - 1) / b would overflow
}

TEST(Checks, SizeMustMatchExactly) {
  EXPECT_NO_THROW(check_size("f", "codes", 6, 6, "N*K"));
  EXPECT_EQ(invalid_argument_message([] { check_size("f", "codes", 5, 6, "N*K"); }),
            "f: codes.size() = 5: must be N*K = 6");
}

TEST(Checks, NullPointerIsAnErrorOnlyWhenThereIsSomethingToRead) {
  EXPECT_NO_THROW(check_pointer("f", "W", nullptr, 0));
  const int x = 0;
  EXPECT_NO_THROW(check_pointer("f", "W", &x, 1));
  EXPECT_EQ(invalid_argument_message([] { check_pointer("f", "W", nullptr, 6); }),
            "f: W = nullptr: must point to 6 elements");
}

TEST(Checks, FiniteRejectsNaNAndInfinities) {
  EXPECT_NO_THROW(check_finite("f", "W[0,0]", std::numeric_limits<float>::max()));
  EXPECT_EQ(invalid_argument_message(
                [] { check_finite("f", "W[3,17]", std::numeric_limits<float>::quiet_NaN()); }),
            "f: W[3,17] = nan: must be finite");
  EXPECT_EQ(invalid_argument_message(
                [] { check_finite("f", "W[0,1]", -std::numeric_limits<float>::infinity()); }),
            "f: W[0,1] = -inf: must be finite");
}

TEST(Checks, CodeMustBeANibble) {
  EXPECT_NO_THROW(check_code("f", "code", 0));
  EXPECT_NO_THROW(check_code("f", "code", 15));
  EXPECT_EQ(invalid_argument_message([] { check_code("f", "codes[1,2]", 16); }),
            "f: codes[1,2] = 16: must be an E2M1 code 0..15");
  EXPECT_EQ(invalid_argument_message([] { check_code("f", "code", -1); }),
            "f: code = -1: must be an E2M1 code 0..15");
}

TEST(Checks, HalfMustBeAnEnumerator) {
  EXPECT_NO_THROW(check_half("f", Half::fp16));
  EXPECT_NO_THROW(check_half("f", Half::bf16));
  EXPECT_EQ(invalid_argument_message([] { check_half("f", static_cast<Half>(7)); }),
            "f: kind = 7: must be Half::fp16 or Half::bf16");
}

}  // namespace
}  // namespace nvfp4::ref::detail
