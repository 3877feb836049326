// The decode GEMVs' weights against the contract (DESIGN.md, "Special
// values"): the fast paths exactly on their windows of weight_scale_2, the
// contract paths for every other g. Every E4M3 byte times every E2M1 code,
// each weight compared with the reference's dequantize_element by bits (two
// NaNs match: an fp32 NaN's payload never reaches an output).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/nvfp4_matmul/gemv_mma.cuh"
#include "kernels/nvfp4_matmul/gemv_scalar.cuh"
#include "reference/nvfp4_matmul/dequant.h"
#include "reference/nvfp4_matmul/float16.h"

namespace nvfp4 {
namespace {

using nvh::HalfKind;

ref::Half ref_half(HalfKind k) { return k == HalfKind::fp16 ? ref::Half::fp16 : ref::Half::bf16; }

// The contract's weight, as the fp32 value the GEMV adds up.
float contract_weight(uint8_t code, uint8_t byte, float g, HalfKind kind) {
  const uint16_t w = ref::dequantize_element(code, ref::scale_product(byte, g), ref_half(kind));
  return nvh::half_bits_to_float(w, kind);
}

bool same_weight(float a, float b) {
  return nvh::float_to_bits(a) == nvh::float_to_bits(b) || (std::isnan(a) && std::isnan(b));
}

// gemv_scalar's weight for (code, byte) on one path: the code in all eight
// positions of a word, the block scale formed as the kernel forms it.
template <HalfKind kKind, bool kContract>
float scalar_weight(uint8_t code, uint8_t byte, float g) {
  float w[8];
  GemvScalarRows<1, 1>::decode_weights<kKind, kContract>(code * 0x11111111u, dequant_scale(byte, g),
                                                         w);
  for (int j = 1; j < 8; ++j) EXPECT_TRUE(same_weight(w[j], w[0]));
  return w[0];
}

// gemv_mma's fast weight for (code, byte) in both halves of a pair and both
// scale positions, restored to the contract's scale: HMUL2 (the host's
// emulation) of SpreadDecode's pair by scale_pairs' pair, times `restore`.
template <HalfKind kKind>
std::vector<float> mma_fast_weights(uint8_t code, uint8_t byte, float g) {
  const GemvMma::FastScales fs = GemvMma::fast_scales<kKind>(g);
  std::vector<float> out;
  for (int position = 0; position < 2; ++position) {
    const uint16_t two = static_cast<uint16_t>(position == 0 ? byte | 0x3800 : (byte << 8) | 0x38);
    uint32_t scales[2], pairs[4];
    SpreadDecode<kKind>::scale_pairs(two, fs.factor, scales);
    SpreadDecode<kKind>::pairs(code | (code << 16),
                               pairs);  // the code at positions 0 and 4: pair 0
    const uint32_t product = nvh::mul_half2<kKind>(pairs[0], scales[position]);
    for (int half = 0; half < 2; ++half) {
      out.push_back(nvh::half_bits_to_float(static_cast<uint16_t>(product >> (16 * half)), kKind) *
                    fs.restore);
    }
  }
  return out;
}

// gemv_mma's contract weight for (code, byte): contract_pairs on a word of
// that code under a block scale formed as the kernel forms it.
template <HalfKind kKind>
float mma_contract_weight(uint8_t code, uint8_t byte, float g) {
  GemvMma::RowStep r{{code * 0x11111111u, 0, 0, 0}, 0};
  const float scales[2] = {dequant_scale(byte, g), 0.f};
  uint32_t pairs[4];
  GemvMma::contract_pairs<kKind>(r, scales, 0, pairs);
  for (int i = 1; i < 4; ++i) EXPECT_EQ(pairs[i], pairs[0]);
  EXPECT_EQ(static_cast<uint16_t>(pairs[0]), static_cast<uint16_t>(pairs[0] >> 16));
  return nvh::half_bits_to_float(static_cast<uint16_t>(pairs[0]), kKind);
}

// How many (byte, code) weights of `weights` differ from the contract at g,
// and the first one as text.
template <class Weights>
int mismatches(HalfKind kind, float g, Weights weights, std::string* first) {
  int count = 0;
  for (int byte = 0; byte < 256; ++byte) {
    for (int code = 0; code < 16; ++code) {
      const float want =
          contract_weight(static_cast<uint8_t>(code), static_cast<uint8_t>(byte), g, kind);
      for (float got : weights(static_cast<uint8_t>(code), static_cast<uint8_t>(byte), g)) {
        if (same_weight(got, want)) continue;
        if (count++ == 0) {
          *first = "g = " + std::to_string(g) + ", byte " + std::to_string(byte) + ", code " +
                   std::to_string(code) + ": got " + std::to_string(got) + ", contract " +
                   std::to_string(want);
        }
      }
    }
  }
  return count;
}

template <HalfKind kKind>
void expect_scalar_window() {
  const int lo = GemvScalar::kFastMinExp<kKind>, hi = GemvScalar::kFastMaxExp<kKind>;
  const auto fast = [](uint8_t c, uint8_t b, float g) {
    return std::vector<float>{scalar_weight<kKind, false>(c, b, g)};
  };
  for (int e = lo - 1; e <= hi + 1 && e <= 127; ++e) {
    std::string first;
    const int n = mismatches(kKind, std::ldexp(1.0f, e), fast, &first);
    if (e < lo || e > hi) {
      EXPECT_GT(n, 0) << "2^" << e
                      << " is outside gemv_scalar's window, yet the fast path matches the contract";
    } else {
      EXPECT_EQ(n, 0) << "2^" << e << ": " << first;
    }
  }
}

// Inside the window the fast weight is the contract's for every byte and
// code; one step past either end some weight differs (fp16: 2^-15 leaves
// 2^-25 products, 2^5 overflows 65504; bf16: 2^-124 leaves 2^-134). bf16's
// window ends at 2^127, the largest fp32 power of two.
TEST(GemvScalarFastWindow, IsExactlyWhereTheFastWeightIsTheContractWeight) {
  EXPECT_EQ(GemvScalar::kFastMinExp<HalfKind::fp16>, -14);
  EXPECT_EQ(GemvScalar::kFastMaxExp<HalfKind::fp16>, 4);
  EXPECT_EQ(GemvScalar::kFastMinExp<HalfKind::bf16>, -123);
  EXPECT_EQ(GemvScalar::kFastMaxExp<HalfKind::bf16>, 127);
  expect_scalar_window<HalfKind::fp16>();
  expect_scalar_window<HalfKind::bf16>();
}

template <HalfKind kKind>
void expect_mma_window() {
  const int lo = GemvMma::kFastMinExp<kKind>, hi = GemvMma::kFastMaxExp<kKind>;
  for (int e = lo - 1; e <= hi + 1; ++e) {
    std::string first;
    const int n = mismatches(kKind, std::ldexp(1.0f, e), mma_fast_weights<kKind>, &first);
    if (e >= lo && e <= hi) {
      EXPECT_EQ(n, 0) << "2^" << e << ": " << first;
    } else if (kKind == HalfKind::fp16) {
      EXPECT_GT(n, 0)
          << "2^" << e
          << " is outside gemv_mma's fp16 window, yet the fast weights match the contract";
    }
  }
}

// fp16: the same window as gemv_scalar, and one step past either end a
// weight differs. bf16: the window's ends are choices, not the limits of
// the weights (gemv_mma.cuh): below 2^-7 the scale factor would have to
// follow g (a register in the loop), above 2^0 the sum would be scaled by
// more than 2^7; FastG below shows the kernel leaves both to the contract
// path.
TEST(GemvMmaFastWindow, FastWeightsTimesRestoreAreTheContractWeights) {
  EXPECT_EQ(GemvMma::kFastMinExp<HalfKind::fp16>, -14);
  EXPECT_EQ(GemvMma::kFastMaxExp<HalfKind::fp16>, 4);
  EXPECT_EQ(GemvMma::kFastMinExp<HalfKind::bf16>, -7);
  EXPECT_EQ(GemvMma::kFastMaxExp<HalfKind::bf16>, 0);
  expect_mma_window<HalfKind::fp16>();
  expect_mma_window<HalfKind::bf16>();
}

// The fast path's scales: the scale pairs' factor is fixed (1, 2^119), the
// sum is restored by g * 2^14 (fp16) or g * 2^7 (bf16), at most 2^7 in bf16.
TEST(GemvMmaFastWindow, ScalesMakeUpTheDecodesPowerOfTwo) {
  for (int e = -7; e <= 0; ++e) {
    const GemvMma::FastScales fs = GemvMma::fast_scales<HalfKind::bf16>(std::ldexp(1.0f, e));
    EXPECT_EQ(fs.factor, 0x1p119f) << e;
    EXPECT_EQ(fs.restore, std::ldexp(1.0f, e + 7)) << e;
    EXPECT_LE(fs.restore, 0x1p7f) << e;
  }
  for (int e = -14; e <= 4; ++e) {
    const GemvMma::FastScales fs = GemvMma::fast_scales<HalfKind::fp16>(std::ldexp(1.0f, e));
    EXPECT_EQ(fs.factor, 1.0f) << e;
    EXPECT_EQ(fs.restore, std::ldexp(1.0f, e + 14)) << e;
  }
}

// Every g the fast paths leave alone, through each GEMV's contract path.
std::vector<float> special_scales() {
  const float inf = std::numeric_limits<float>::infinity();
  return {0.0f,     -0.0f,  0x1p-149f,     0x1.8p-140f, 1e-30f, 1e30f,   3e38f,
          inf,      -inf,   std::nanf(""), -0.25f,      0.3f,   0.375f,  1.0f / 3,
          0x1p-15f, 0x1p5f, 0x1p-124f,     0x1p-117f,   2.0f,   0x1p127f};
}

TEST(GemvContractPaths, EveryWeightIsTheContractWeightForAnyG) {
  for (float g : special_scales()) {
    std::string first;
    EXPECT_EQ(mismatches(
                  HalfKind::fp16, g,
                  [](uint8_t c, uint8_t b, float x) {
                    return std::vector<float>{scalar_weight<HalfKind::fp16, true>(c, b, x)};
                  },
                  &first),
              0)
        << first;
    EXPECT_EQ(mismatches(
                  HalfKind::bf16, g,
                  [](uint8_t c, uint8_t b, float x) {
                    return std::vector<float>{scalar_weight<HalfKind::bf16, true>(c, b, x)};
                  },
                  &first),
              0)
        << first;
    EXPECT_EQ(mismatches(
                  HalfKind::fp16, g,
                  [](uint8_t c, uint8_t b, float x) {
                    return std::vector<float>{mma_contract_weight<HalfKind::fp16>(c, b, x)};
                  },
                  &first),
              0)
        << first;
    EXPECT_EQ(mismatches(
                  HalfKind::bf16, g,
                  [](uint8_t c, uint8_t b, float x) {
                    return std::vector<float>{mma_contract_weight<HalfKind::bf16>(c, b, x)};
                  },
                  &first),
              0)
        << first;
  }
}

// The path test itself: true exactly for the positive powers of two of the
// window, whatever the sign, exponent field and mantissa around them.
template <HalfKind kKind>
void expect_fast_g() {
  for (uint32_t sign : {0u, 1u}) {
    for (uint32_t field = 0; field < 256; ++field) {
      for (uint32_t mantissa : {0u, 1u, 0x400000u, 0x7FFFFFu}) {
        const float g = nvh::bits_to_float(sign << 31 | field << 23 | mantissa);
        const int e = static_cast<int>(field) - 127;
        const bool pow2 = sign == 0 && mantissa == 0 && field != 0 && field != 255;
        EXPECT_EQ(GemvScalar::fast_g<kKind>(g), pow2 && e >= GemvScalar::kFastMinExp<kKind> &&
                                                    e <= GemvScalar::kFastMaxExp<kKind>)
            << std::hex << nvh::float_to_bits(g);
        EXPECT_EQ(GemvMma::fast_g<kKind>(g),
                  pow2 && e >= GemvMma::kFastMinExp<kKind> && e <= GemvMma::kFastMaxExp<kKind>)
            << std::hex << nvh::float_to_bits(g);
      }
    }
  }
}

TEST(FastG, TakesOnlyThePowersOfTwoOfTheWindow) {
  expect_fast_g<HalfKind::fp16>();
  expect_fast_g<HalfKind::bf16>();
}

}  // namespace
}  // namespace nvfp4
