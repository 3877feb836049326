// prefill_fused_prepack: W's packed codes reordered once, for prefill_fused's
// wgmma kernel (prefill_fused_wgmma.cuh). That kernel's lane t needs, of each
// 32-k group j of a row's 128-k stage, the codes of k = 32j + 8i + 2t and the
// next k (i = 0..3): byte t of each of the group's four 4-byte words, its two
// nibbles then set 16 bits apart (SpreadDecode's pairs). In the contract's
// order (low nibble = even k, rows of K / 2 bytes) that is four 16-byte
// shared loads a row and group, three prmt and a nibble shuffle a word,
// stage after stage in every call. Prepacked, each of the lane's words sits
// whole where one 8-byte load takes two of them: a one-time pass over the
// weights, which are constant across calls (ORT prepacks constant
// initializers the same way); the operator takes the result beside B
// (MatmulArgs::prepacked_B). Only K % 128 == 0 (the wgmma kernel's own
// predicate), and the same N x K / 2 bytes as B.
//
// The order within each 64-byte row stage (a row's 128 k; stages of a row in
// k order, rows in order, as in B): lane t's word of group j at byte
// prepacked_byte(t, j). Each word is lane_word() of the contract's group,
// the very function the wgmma kernel applies to the contract's order, so the
// two orders give the kernel the same registers and the same bits.
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"

namespace nvfp4 {

// Where lane t's word of 32-k group j (t, j = 0..3) sits in a prepacked
// 64-byte row stage: groups 2p and 2p + 1 side by side (one 8-byte load),
// in 16-byte chunk 2 (t / 2) + p, half t % 2. prefill_fused_wgmma.cuh says
// why the chunks fall so (its shared loads meet no bank twice).
NVH_HD constexpr uint32_t prepacked_byte(uint32_t t, uint32_t j) {
  return 32 * (t / 2) + 16 * (j / 2) + 8 * (t % 2) + 4 * (j % 2);
}

// Lane t's word of a 32-k group given in the contract's order (its four
// 4-byte words, k ascending): byte t of each word, then the nibbles of
// those four bytes unshuffled, the even k's codes in the low 16 bits and
// the odd k's in the high (one swap of nibbles 1, 5 with 2, 6, then of
// bytes 1 and 2), so that SpreadDecode's pair i is byte i's two codes.
NVH_HD NVH_INLINE uint32_t lane_word(const nvh::U32x4& group, uint32_t t) {
  const uint32_t pick = t | ((4 + t) << 4);  // byte t of two words, as bytes 0 and 1
  uint32_t x = nvh::byte_perm(nvh::byte_perm(group.x, group.y, pick),
                              nvh::byte_perm(group.z, group.w, pick), 0x5410u);
  const uint32_t swap = (x ^ (x >> 4)) & 0x00F000F0u;
  x = x ^ swap ^ (swap << 4);
  return nvh::byte_perm(x, 0u, 0x3120u);
}

struct PrefillFusedPrepack {
  static constexpr uint32_t kMaxBlockThreads = 256;
  static constexpr uint32_t kMaxBlocks = 4096;  // past it a thread loops
  static constexpr int64_t kStageK = 128;
  static constexpr int64_t kStageBytes = kStageK / 2;

  struct Params {
    const uint8_t* packed;  // B: [N, K / 2], 16-byte aligned
    uint8_t* out;           // the same size, 16-byte aligned
    int64_t N, K;           // K % 128 == 0
  };

  // Each thread reorders whole 64-byte row stages (they tile B, K / 2 being
  // a multiple of 64): four 16-byte loads, four 16-byte stores.
  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t stages = p.N * (p.K / kStageK);
    const int64_t stride = int64_t{ctx.grid_dim().x} * ctx.block_dim().x;
    for (int64_t s = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x;
         s < stages; s += stride) {
      nvh::U32x4 group[4];
      NVH_UNROLL
      for (int j = 0; j < 4; ++j) group[j] = nvh::load_u32x4(p.packed + s * kStageBytes + 16 * j);
      uint32_t words[16];
      NVH_UNROLL
      for (uint32_t t = 0; t < 4; ++t) {
        NVH_UNROLL
        for (uint32_t j = 0; j < 4; ++j) words[prepacked_byte(t, j) / 4] = lane_word(group[j], t);
      }
      NVH_UNROLL
      for (int c = 0; c < 4; ++c) {
        nvh::store_u32x4(p.out + s * kStageBytes + 16 * c,
                         {words[4 * c], words[4 * c + 1], words[4 * c + 2], words[4 * c + 3]});
      }
    }
  }

  static nvh::LaunchShape shape(const Params& p) {
    const int64_t stages = p.N * (p.K / kStageK);
    const int64_t blocks = (stages + kMaxBlockThreads - 1) / kMaxBlockThreads;
    nvh::LaunchShape s;
    s.block = {kMaxBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>(blocks < kMaxBlocks ? blocks : kMaxBlocks), 1, 1};
    return s;
  }
};

}  // namespace nvfp4
