// fill_random: random bits written where they are needed, on the device, so
// that a replay can fill gigabytes of weights without a host round trip.
// Counter-based: element i's value is a hash of (seed, i), so any grid, the
// host executor included, writes the same bytes.
//   bytes:      every byte random (packed E2M1 codes: all 16 codes, -0 included)
//   byte_range: lo + hash % span (E4M3 scales kept finite and normal)
//   halves:     fp16/bf16 uniform in [-1, 1) (activations, bias)
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"

namespace nvfp4 {

struct FillRandom {
  static constexpr uint32_t kMaxBlockThreads = 256;
  static constexpr uint32_t kMaxBlocks = 16384;  // grid-stride beyond; ample to fill an H200

  enum class Mode : uint8_t { bytes, byte_range, halves };

  struct Params {
    void* out;
    int64_t count;  // bytes (bytes, byte_range) or 16-bit elements (halves)
    uint64_t seed;
    Mode mode;
    uint8_t lo, span;    // byte_range: lo + hash % span; span > 0
    nvh::HalfKind kind;  // halves
  };

  // splitmix64's finalizer: every input bit reaches every output bit.
  NVH_HD static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
  NVH_HD static uint64_t hash(uint64_t seed, uint64_t i) {
    return mix(seed ^ mix(i + 0x9E3779B97F4A7C15ull));
  }

  // Items a thread handles per step: eight bytes from one hash, or one half.
  NVH_HD static int64_t items(const Params& p) {
    return p.mode == Mode::halves ? p.count : (p.count + 7) / 8;
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t n = items(p);
    const int64_t stride = int64_t{ctx.grid_dim().x} * ctx.block_dim().x;
    for (int64_t i = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x; i < n;
         i += stride) {
      const uint64_t h = hash(p.seed, static_cast<uint64_t>(i));
      if (p.mode == Mode::halves) {
        // 24 random bits as a float in [0, 2), minus one: exact, so the host
        // and the GPU round the same value.
        const float u = static_cast<float>(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
        nvh::store_u16(static_cast<uint16_t*>(p.out) + i, nvh::round_to_half_bits(u, p.kind));
        continue;
      }
      auto* out = static_cast<uint8_t*>(p.out) + 8 * i;
      const int64_t left = p.count - 8 * i;
      for (int b = 0; b < 8 && b < left; ++b) {
        const auto byte = static_cast<uint8_t>(h >> (8 * b));
        // The value before the address, as `out[b] = ...` orders them (C++17),
        // so the device code is the assignment's instruction for instruction.
        const uint8_t value =
            p.mode == Mode::bytes ? byte : static_cast<uint8_t>(p.lo + byte % p.span);
        nvh::store_u8(out + b, value);
      }
    }
  }

  static nvh::LaunchShape shape(const Params& p) {
    const int64_t blocks = (items(p) + kMaxBlockThreads - 1) / kMaxBlockThreads;
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>(blocks < kMaxBlocks ? (blocks > 0 ? blocks : 1) : kMaxBlocks),
              1, 1};
    return s;
  }
};

}  // namespace nvfp4
