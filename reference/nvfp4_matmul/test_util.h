// reference/nvfp4_matmul/test_util.h -- test-only helpers shared by this folder's *_test.cc files.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "float16.h"

namespace nvfp4::ref::testing {

// The what() of the std::invalid_argument that f() throws; a marker string if f() returns or
// throws anything else, so EXPECT_EQ on the full message shows what happened instead.
template <typename F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (...) {
    return "<threw something other than std::invalid_argument>";
  }
  return "<did not throw>";
}

inline uint32_t bits_of(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float float_from_bits(uint32_t u) {
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Bit patterns of values the dtype holds exactly (tests write matrices as numbers); throws if a
// value would round, so a typo cannot silently change a hand-checked case.
inline std::vector<uint16_t> halves(std::initializer_list<double> values, Half kind) {
  std::vector<uint16_t> out;
  for (double v : values) {
    out.push_back(round_to_half(v, kind));
    if (half_to_double(out.back(), kind) != v && !std::isnan(v))
      throw std::logic_error("not exact in the dtype");
  }
  return out;
}

}  // namespace nvfp4::ref::testing
