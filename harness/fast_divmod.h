// Division by a divisor fixed for a whole launch, as one multiply-high, an
// add and a shift (Granlund and Montgomery's round-up method) instead of the
// dozens of instructions a GPU spends on a 32-bit divide. Exact for every
// n < 2^31 and every divisor d >= 1.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "harness/kernel_ctx.h"

namespace nvh {

struct FastDivmod {
  uint32_t divisor = 1, multiplier = 1, shift = 0;

  static FastDivmod make(uint32_t d) {
    if (d == 0) throw std::invalid_argument("FastDivmod: divisor = 0");
    uint32_t s = 0;
    while ((uint64_t{1} << s) < d) ++s;  // s = ceil(log2(d))
    FastDivmod f;
    f.divisor = d;
    f.shift = s;
    f.multiplier = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << s) - d)) / d + 1);
    return f;
  }

  // n / divisor for n < 2^31 (so the add below cannot carry out of 32 bits).
  NVH_HD NVH_INLINE uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t high = __umulhi(n, multiplier);
#else
    const uint32_t high = static_cast<uint32_t>((uint64_t{n} * multiplier) >> 32);
#endif
    return (high + n) >> shift;
  }
  NVH_HD NVH_INLINE uint32_t mod(uint32_t n, uint32_t quotient) const {
    return n - quotient * divisor;
  }
};

}  // namespace nvh
