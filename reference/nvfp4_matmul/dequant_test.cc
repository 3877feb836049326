// The dequant contract: scale product first (fp32), then times E2M1 (fp32), then one RNE to
// the dtype. Cases where another multiplication order gives other bits pin the order down.
#include "dequant.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "e2m1.h"
#include "e4m3.h"
#include "test_util.h"

namespace nvfp4::ref {
namespace {

using testing::float_from_bits;
using testing::invalid_argument_message;

TEST(Dequant, ScaleProductIsE4M3TimesGlobalScaleInFp32) {
  EXPECT_EQ(scale_product(0x38, 0.25f), 0.25f);
  EXPECT_EQ(scale_product(0x7E, 2.0f), 896.0f);
  EXPECT_EQ(scale_product(0x00, 3.0f), 0.0f);
  EXPECT_TRUE(std::isnan(scale_product(0x7F, 1.0f)));
}

// Found by search: code 3 (1.5), scale 0x09 (1.125 * 2^-6) and these g. The contract's order
// e2m1 * (e4m3 * g) and the order (e2m1 * e4m3) * g differ by one fp32 ulp, and the dtype
// rounding keeps the difference.
TEST(Dequant, MultiplicationOrderIsPartOfTheContract) {
  struct Case {
    uint32_t g_bits;
    Half kind;
    uint16_t contract, other_order;
  };
  for (const Case& c : {Case{0x3b807b43, Half::fp16, 0x06c6, 0x06c7},
                        Case{0x3b817b43, Half::bf16, 0x38da, 0x38db}}) {
    const float g = float_from_bits(c.g_bits);
    EXPECT_EQ(dequantize_element(0x3, scale_product(0x09, g), c.kind), c.contract);
    const float other = (e2m1_to_float(0x3) * e4m3_to_float(0x09)) * g;
    EXPECT_EQ(round_float_to_half(other, c.kind), c.other_order);
    const uint8_t packed = 0x03, scale = 0x09;
    EXPECT_EQ(dequantize(&packed, &scale, g, 1, 1, 16, c.kind), std::vector<uint16_t>{c.contract});
  }
}

TEST(Dequant, EveryCodeWithUnitScale) {
  const uint8_t packed[8] = {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE};  // codes 0..15
  const uint8_t scale = 0x38;                                                  // 1.0
  const std::vector<uint16_t> fp16 = dequantize(packed, &scale, 1.0f, 1, 16, 16, Half::fp16);
  EXPECT_EQ(fp16, (std::vector<uint16_t>{0x0000, 0x3800, 0x3C00, 0x3E00, 0x4000, 0x4200, 0x4400,
                                         0x4600, 0x8000, 0xB800, 0xBC00, 0xBE00, 0xC000, 0xC200,
                                         0xC400, 0xC600}));
  const std::vector<uint16_t> bf16 = dequantize(packed, &scale, 1.0f, 1, 16, 16, Half::bf16);
  EXPECT_EQ(bf16, (std::vector<uint16_t>{0x0000, 0x3F00, 0x3F80, 0x3FC0, 0x4000, 0x4040, 0x4080,
                                         0x40C0, 0x8000, 0xBF00, 0xBF80, 0xBFC0, 0xC000, 0xC040,
                                         0xC080, 0xC0C0}));
}

// Rows use their own scales; a short last block and the odd-K pad nibble are handled.
TEST(Dequant, PerRowPerBlockScalesAndPadNibble) {
  // N = 2, K = 3, block_size = 2: row bytes 2, blocks 2. Pad nibbles are 0xF: ignored.
  const uint8_t packed[4] = {0x22, 0xF2, 0x22, 0xF2};  // every element code 2 (1.0)
  const uint8_t scales[4] = {0x38, 0x40, 0x30, 0x48};  // 1, 2, 0.5, 4
  EXPECT_EQ(dequantize(packed, scales, 1.0f, 2, 3, 2, Half::fp16),
            (std::vector<uint16_t>{0x3C00, 0x3C00, 0x4000, 0x3800, 0x3800, 0x4400}));
}

TEST(Dequant, OverflowNaNScaleAndSubnormalOutputs) {
  const uint8_t packed = 0x07, big = 0x7E, nan = 0x7F, tiny = 0x01;
  EXPECT_EQ(dequantize(&packed, &big, 1000.0f, 1, 1, 1, Half::fp16)[0],
            0x7C00);                                                           // 6*448*1000 > 65504
  EXPECT_EQ(dequantize(&packed, &nan, 1.0f, 1, 1, 1, Half::fp16)[0], 0x7FFF);  // NaN scale: NaN
  // 6 * 2^-9 * 2^-16 = 3 * 2^-24: three fp16 subnormal ulps.
  EXPECT_EQ(dequantize(&packed, &tiny, 0x1p-16f, 1, 1, 1, Half::fp16)[0], 0x0003);
  // 3 * 2^-9 * 2^-16 = 1.5 ulps: a subnormal tie, to the even 2 ulps.
  const uint8_t three = 0x05;
  EXPECT_EQ(dequantize(&three, &tiny, 0x1p-16f, 1, 1, 1, Half::fp16)[0], 0x0002);
}

TEST(Dequant, QuantizedWeightOverloadMatchesPointerOverload) {
  QuantizedWeight q;
  q.N = 1;
  q.K = 3;
  q.block_size = 2;
  q.packed = {0x71, 0x0F};
  q.scales = {0x38, 0x40};
  q.global_scale = 0.5f;
  EXPECT_EQ(dequantize(q, Half::bf16),
            dequantize(q.packed.data(), q.scales.data(), q.global_scale, 1, 3, 2, Half::bf16));
  EXPECT_TRUE(dequantize(QuantizedWeight{0, 0, 16, {}, {}, 1.0f}, Half::fp16).empty());
}

TEST(Dequant, PointerOverloadRejectsBadArguments) {
  const uint8_t b[4] = {};
  EXPECT_EQ(invalid_argument_message([&] { dequantize(b, b, 1.0f, -1, 2, 16, Half::fp16); }),
            "dequantize: N = -1: must be non-negative");
  EXPECT_EQ(invalid_argument_message([&] { dequantize(b, b, 1.0f, 1, -2, 16, Half::fp16); }),
            "dequantize: K = -2: must be non-negative");
  EXPECT_EQ(invalid_argument_message([&] { dequantize(b, b, 1.0f, 1, 2, 0, Half::fp16); }),
            "dequantize: block_size = 0: must be positive");
  EXPECT_EQ(
      invalid_argument_message([&] { dequantize(b, b, 1.0f, 1, 2, 16, static_cast<Half>(9)); }),
      "dequantize: kind = 9: must be Half::fp16 or Half::bf16");
  EXPECT_EQ(invalid_argument_message([&] {
              dequantize(b, b, 1.0f, int64_t{1} << 40, int64_t{1} << 40, 16, Half::fp16);
            }),
            "dequantize: N*K = 1099511627776*1099511627776: overflows a 64-bit product");
  EXPECT_EQ(invalid_argument_message([&] { dequantize(nullptr, b, 1.0f, 2, 3, 2, Half::fp16); }),
            "dequantize: packed = nullptr: must point to 4 elements");
  EXPECT_EQ(invalid_argument_message([&] { dequantize(b, nullptr, 1.0f, 2, 3, 2, Half::fp16); }),
            "dequantize: scales = nullptr: must point to 4 elements");
  EXPECT_NO_THROW(dequantize(nullptr, nullptr, 1.0f, 0, 3, 2, Half::fp16));  // nothing to read
}

TEST(Dequant, QuantizedWeightOverloadRejectsBadArguments) {
  QuantizedWeight q{2, 3, 2, std::vector<uint8_t>(4), std::vector<uint8_t>(4), 1.0f};
  EXPECT_NO_THROW(dequantize(q, Half::fp16));
  QuantizedWeight bad = q;
  bad.packed.resize(3);
  EXPECT_EQ(invalid_argument_message([&] { dequantize(bad, Half::fp16); }),
            "dequantize: q.packed.size() = 3: must be q.N*ceil(q.K/2) = 4");
  bad = q;
  bad.scales.resize(5);
  EXPECT_EQ(invalid_argument_message([&] { dequantize(bad, Half::fp16); }),
            "dequantize: q.scales.size() = 5: must be q.N*ceil(q.K/q.block_size) = 4");
  bad = q;
  bad.block_size = 0;
  EXPECT_EQ(invalid_argument_message([&] { dequantize(bad, Half::fp16); }),
            "dequantize: q.block_size = 0: must be positive");
  bad = q;
  bad.N = -2;
  EXPECT_EQ(invalid_argument_message([&] { dequantize(bad, Half::fp16); }),
            "dequantize: q.N = -2: must be non-negative");
  bad = q;
  bad.K = -3;
  EXPECT_EQ(invalid_argument_message([&] { dequantize(bad, Half::fp16); }),
            "dequantize: q.K = -3: must be non-negative");
  bad = q;
  bad.N = int64_t{1} << 62;
  EXPECT_EQ(invalid_argument_message([&] { dequantize(bad, Half::fp16); }),
            "dequantize: q.N*ceil(q.K/2) = 4611686018427387904*2: overflows a 64-bit product");
}

}  // namespace
}  // namespace nvfp4::ref
