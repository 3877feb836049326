#include "kernels/nvfp4_matmul/fp4_codec.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "reference/nvfp4_matmul/e2m1.h"
#include "reference/nvfp4_matmul/e4m3.h"
#include "reference/nvfp4_matmul/float16.h"

namespace nvfp4 {
namespace {

uint32_t bits(float f) { return nvh::float_to_bits(f); }

void expect_word_decodes(uint32_t word) {
  float out[8];
  decode_e2m1x8(word, out);
  for (int i = 0; i < 8; ++i) {
    const uint8_t code = (word >> (4 * i)) & 0xF;
    ASSERT_EQ(bits(out[i]), bits(ref::e2m1_to_float(code)))
        << "word 0x" << std::hex << word << " position " << std::dec << i << " code " << int{code};
  }
}

// Every code in every position, -0.0 (code 8) included, compared by bits.
TEST(DecodeE2m1x8, EveryCodeInEveryPositionMatchesTheReference) {
  std::mt19937 rng(3);
  for (int position = 0; position < 8; ++position) {
    for (uint32_t code = 0; code < 16; ++code) {
      const uint32_t others = rng() & ~(0xFu << (4 * position));
      expect_word_decodes(others | (code << (4 * position)));
    }
  }
}

TEST(DecodeE2m1x8, RandomWordsMatchTheReference) {
  std::mt19937 rng(11);
  for (int i = 0; i < 100000; ++i) expect_word_decodes(rng());
  expect_word_decodes(0u);
  expect_word_decodes(0xFFFFFFFFu);
  expect_word_decodes(0x88888888u);
}

TEST(DecodeE2m1x2, EveryByteMatchesTheReference) {
  for (int b = 0; b < 256; ++b) {
    float out[2];
    decode_e2m1x2(static_cast<uint8_t>(b), out);
    EXPECT_EQ(bits(out[0]), bits(ref::e2m1_to_float(b & 0xF))) << b;
    EXPECT_EQ(bits(out[1]), bits(ref::e2m1_to_float(b >> 4))) << b;
  }
}

// The shift-and-mask decode: code i and code i + 4 of a word in pair i, each
// e2m1 * 2^-bias (2^-14 in fp16, 2^-126 in bf16, the value the bit placement
// gives). Every code in every position, -0.0 and the subnormal 0.5 included,
// compared by bits after an exact power-of-two rescale.
template <nvh::HalfKind kKind>
void expect_spread_decode(uint32_t word) {
  const ref::Half kind = kKind == nvh::HalfKind::fp16 ? ref::Half::fp16 : ref::Half::bf16;
  const int bias = kKind == nvh::HalfKind::fp16 ? 14 : 126;
  uint32_t pairs[4];
  SpreadDecode<kKind>::pairs(word, pairs);
  for (int i = 0; i < 8; ++i) {
    const uint8_t code = (word >> (4 * i)) & 0xF;
    const uint16_t got = static_cast<uint16_t>(pairs[i % 4] >> (16 * (i / 4)));
    const float value = std::ldexp(nvh::half_bits_to_float(got, kKind), bias);
    ASSERT_EQ(bits(value), bits(ref::e2m1_to_float(code)))
        << ref::half_name(kind) << " word 0x" << std::hex << word << " position " << std::dec << i;
  }
}

TEST(SpreadDecode, EveryCodeInEveryPositionMatchesTheReference) {
  std::mt19937 rng(17);
  for (int position = 0; position < 8; ++position) {
    for (uint32_t code = 0; code < 16; ++code) {
      const uint32_t word = (rng() & ~(0xFu << (4 * position))) | (code << (4 * position));
      expect_spread_decode<nvh::HalfKind::fp16>(word);
      expect_spread_decode<nvh::HalfKind::bf16>(word);
    }
  }
  for (int i = 0; i < 100000; ++i) {
    const uint32_t word = rng();
    expect_spread_decode<nvh::HalfKind::fp16>(word);
    expect_spread_decode<nvh::HalfKind::bf16>(word);
  }
}

// What the GEMV computes per weight: a decoded pair times scale_pairs() (one
// HMUL2, the host's emulation) with the largest factor, then the power of
// two still missing. For every code and every E4M3 byte in both scale
// positions that must be e2m1 * e4m3 bit for bit (NaN for the NaN bytes):
// the HMUL2 may neither round, overflow nor underflow.
// (gemv_contract_test.cc checks every factor the fast path uses.)
template <nvh::HalfKind kKind>
void expect_scaled_decode() {
  const ref::Half kind = kKind == nvh::HalfKind::fp16 ? ref::Half::fp16 : ref::Half::bf16;
  const float factor = std::ldexp(1.0f, SpreadDecode<kKind>::kMaxFactorExp);
  const float restore =
      std::ldexp(1.0f, SpreadDecode<kKind>::kPairExp - SpreadDecode<kKind>::kMaxFactorExp);
  for (int b = 0; b < 256; ++b) {
    for (int position = 0; position < 2; ++position) {
      const uint16_t two = static_cast<uint16_t>(position == 0 ? b | 0x3800 : (b << 8) | 0x38);
      uint32_t scales[2];
      SpreadDecode<kKind>::scale_pairs(two, factor, scales);
      for (uint32_t code = 0; code < 16; ++code) {
        uint32_t pairs[4];
        SpreadDecode<kKind>::pairs(code | (code << 16), pairs);  // code in positions 0 and 4
        const uint32_t product = nvh::mul_half2<kKind>(pairs[0], scales[position]);
        for (int half = 0; half < 2; ++half) {
          const float got =
              nvh::half_bits_to_float(static_cast<uint16_t>(product >> (16 * half)), kKind) *
              restore;
          const float want = ref::e2m1_to_float(static_cast<uint8_t>(code)) *
                             ref::e4m3_to_float(static_cast<uint8_t>(b));
          if ((b & 0x7F) == 0x7F) {
            ASSERT_TRUE(std::isnan(got)) << ref::half_name(kind) << " scale byte " << b;
          } else {
            ASSERT_EQ(bits(got), bits(want))
                << ref::half_name(kind) << " code " << code << " scale byte " << b << " position "
                << position << " half " << half;
          }
        }
      }
    }
  }
}

TEST(SpreadDecode, TimesItsScalePairAndSumRestoreIsTheExactProduct) {
  expect_scaled_decode<nvh::HalfKind::fp16>();
  expect_scaled_decode<nvh::HalfKind::bf16>();
}

// Products of an E2M1 pair and an E4M3 scale pair are exact, so the pair
// multiply must give the rounded fp32 product bit for bit.
TEST(MulHalf2, GivesTheRoundedProduct) {
  for (nvh::HalfKind kind : {nvh::HalfKind::fp16, nvh::HalfKind::bf16}) {
    for (uint32_t code = 0; code < 16; ++code) {
      for (int b = 0; b < 256; ++b) {
        if ((b & 0x7F) == 0x7F) continue;
        const float w = ref::e2m1_to_float(static_cast<uint8_t>(code)),
                    s = ref::e4m3_to_float(static_cast<uint8_t>(b));
        const uint32_t a = nvh::pack_half2_rn(w, -w, kind), sc = nvh::pack_half2_rn(s, s, kind);
        const uint32_t got = kind == nvh::HalfKind::fp16
                                 ? nvh::mul_half2<nvh::HalfKind::fp16>(a, sc)
                                 : nvh::mul_half2<nvh::HalfKind::bf16>(a, sc);
        ASSERT_EQ(got, nvh::pack_half2_rn(w * s, -w * s, kind)) << code << " " << b;
      }
    }
  }
}

// The host prmt against its definition, selector nibbles with and without
// the sign-replicate bit.
TEST(BytePerm, HostEmulationFollowsThePtxDefinition) {
  const uint32_t lo = 0x83624100u, hi = 0xF7E6D5C4u;
  const uint8_t bytes[8] = {0x00, 0x41, 0x62, 0x83, 0xC4, 0xD5, 0xE6, 0xF7};
  for (uint32_t s = 0; s < 0x10000; s += 7) {
    uint32_t expect = 0;
    for (int i = 0; i < 4; ++i) {
      const uint32_t sel = (s >> (4 * i)) & 0xF;
      uint32_t b = bytes[sel & 7];
      if (sel & 8) b = (b & 0x80) ? 0xFF : 0x00;
      expect |= b << (8 * i);
    }
    ASSERT_EQ(nvh::byte_perm(lo, hi, s), expect) << std::hex << s;
  }
}

TEST(DequantScale, IsTheFp32ProductOfTheE4m3ValueAndTheTensorScale) {
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7F) == 0x7F) continue;  // NaN
    const float g = 0.0371f;
    EXPECT_EQ(bits(dequant_scale(static_cast<uint8_t>(b), g)),
              bits(ref::e4m3_to_float(static_cast<uint8_t>(b)) * g))
        << b;
  }
}

}  // namespace
}  // namespace nvfp4
