// The bench's K-sliced gemv_mma (gemv_sliced.cuh, then prefill_fused_sum.cuh's sum) on
// the host executor: in exact mode (every partial sum exact in fp32, so the
// order of the additions cannot show) it must give the route's bits, or its
// times in the bench's depth group would time a wrong kernel.
#include "bench/nvfp4_matmul/gemv_sliced.cuh"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "harness/backend.h"
#include "harness/launch.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "kernels/nvfp4_matmul/prefill_fused_sum.cuh"

namespace nvfp4 {
namespace {

// M = 8, K = 12288 (48 stages: A not pre-paired, each warp of a slice
// streams past the two-stage pipeline), N = 40 (a partial last tile).
TEST(GemvMmaSliced, GivesTheRoutesBitsInExactMode) {
  constexpr int64_t M = 8, N = 40, K = 12288;
  auto host = nvh::make_host_backend();
  std::mt19937 rng(7);
  // bf16 small integers, codes of any value, scales 0.5 or 1, g = 2^-6 (the
  // fast path): every product a multiple of 2^-8 and every sum below 2^16.
  std::vector<uint16_t> a(M * K);
  for (auto& x : a)
    x = nvh::round_to_half_bits(static_cast<float>(int(rng() % 9) - 4), nvh::HalfKind::bf16);
  std::vector<uint8_t> codes(N * K / 2), scales(N * K / 16);
  for (auto& c : codes) c = static_cast<uint8_t>(rng());
  for (auto& s : scales) s = rng() % 2 ? 0x38 : 0x30;
  const float g = 1.0f / 64;
  nvh::Buffer A(*host, a.size() * 2, "A"), B(*host, codes.size(), "B"),
      S(*host, scales.size(), "scales"), G(*host, 4, "g"), Y_route(*host, M * N * 2, "Y route"),
      Y_sliced(*host, M * N * 2, "Y sliced");
  A.upload(a.data(), a.size() * 2);
  B.upload(codes.data(), codes.size());
  S.upload(scales.data(), scales.size());
  G.upload(&g, 4);
  MatmulArgs args;
  args.A = {A.data(), {M, K}, ElemType::bf16};
  args.B = {B.data(), {N, K / 2}, ElemType::e2m1x2};
  args.weight_scale = {S.data(), {N, K / 16}, ElemType::e4m3};
  args.weight_scale_2 = {G.data(), {}, ElemType::fp32};
  args.Y = {Y_route.data(), {M, N}, ElemType::bf16};
  Options o;
  o.force_route = Route::gemv_mma;
  ASSERT_EQ(run_matmul(*host, args, o).route, Route::gemv_mma);
  std::vector<uint8_t> want(M * N * 2), got(M * N * 2);
  Y_route.download(want.data(), want.size());

  for (uint32_t slices : {2u, 3u}) {
    nvh::Buffer partial(*host, slices * M * N * 4, "partial sums");
    GemvMmaSliced::Params p;
    static_cast<GemvOperands&>(p) = {static_cast<const uint16_t*>(A.data()),
                                     static_cast<const uint8_t*>(B.data()),
                                     static_cast<const uint8_t*>(S.data()),
                                     static_cast<const float*>(G.data()),
                                     nullptr,
                                     static_cast<uint16_t*>(Y_sliced.data()),
                                     M,
                                     N,
                                     K,
                                     nvh::HalfKind::bf16};
    p.split = GemvMma::kWarps;
    p.slices = slices;
    p.partial = static_cast<float*>(partial.data());
    GemvMmaSliced::check(p);
    nvh::launch<GemvMmaSliced>(*host, GemvMmaSliced::shape(p), p);
    const PrefillFusedParams q = whole_columns(p, p.partial, static_cast<int32_t>(slices));
    nvh::launch<PrefillFusedSum>(*host, PrefillFusedSum::shape(q), q);
    Y_sliced.download(got.data(), got.size());
    EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size()), 0) << slices << " slices";
  }
}

}  // namespace
}  // namespace nvfp4
