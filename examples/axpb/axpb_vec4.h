// vec4: four elements per thread, 16-byte loads and stores; x and y 16-byte
// aligned and n % 4 == 0 (the dispatcher's predicates), so every access is
// aligned (the host executor's memory checker faults a misaligned one, as the GPU would).
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"

namespace axpb {

struct Vec4Kernel {
  static constexpr uint32_t kBlockThreads = 128;
  struct Params {
    const float* x;
    float* y;
    int64_t quads;  // n / 4
    float a, b;
    bool drop_last;  // fault injection (axpb.h): the last quad's last element is not written
  };

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const int64_t q = int64_t{ctx.block_idx().x} * ctx.block_dim().x + ctx.thread_idx().x;
    if (q >= p.quads) return;
    const nvh::U32x4 in = nvh::load_u32x4(p.x + 4 * q);
    const uint32_t lanes[4] = {in.x, in.y, in.z, in.w};
    uint32_t out[4];
    for (int i = 0; i < 4; ++i)
      out[i] = nvh::float_to_bits(nvh::fma_rn(p.a, nvh::bits_to_float(lanes[i]), p.b));
    if (p.drop_last && q == p.quads - 1) out[3] = 0;
    nvh::store_u32x4(p.y + 4 * q, {out[0], out[1], out[2], out[3]});
  }

  static nvh::LaunchShape shape(const Params& p) {
    nvh::LaunchShape s;
    s.block = {kBlockThreads, 1, 1};
    s.grid = {static_cast<uint32_t>((p.quads + kBlockThreads - 1) / kBlockThreads), 1, 1};
    return s;
  }
};

}  // namespace axpb
