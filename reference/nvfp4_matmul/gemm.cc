#include "gemm.h"

#include "checks.h"

namespace nvfp4::ref {

namespace {

struct GemmShape {
  int64_t M, N, K;
};

// Every shape and pointer error, before anything is read. The products are checked even when
// a factor is zero elsewhere: M*N can overflow while K == 0 makes M*K and N*K zero.
void check_gemm_args(const uint16_t* A, const uint16_t* W, GemmShape s, Half kind) {
  constexpr const char* fn = "gemm_fp64";
  detail::check_nonnegative(fn, "M", s.M);
  detail::check_nonnegative(fn, "N", s.N);
  detail::check_nonnegative(fn, "K", s.K);
  detail::check_half(fn, kind);
  const int64_t a_count = detail::checked_product(fn, "M", s.M, "K", s.K);
  const int64_t w_count = detail::checked_product(fn, "N", s.N, "K", s.K);
  detail::checked_product(fn, "M", s.M, "N", s.N);
  detail::check_pointer(fn, "A", A, a_count);
  detail::check_pointer(fn, "W", W, w_count);
}

}  // namespace

std::vector<double> gemm_fp64(const uint16_t* A, const uint16_t* W, const uint16_t* bias, int64_t M,
                              int64_t N, int64_t K, Half kind) {
  check_gemm_args(A, W, {M, N, K}, kind);
  const std::vector<double> a = halves_to_doubles(A, M * K, kind);
  const std::vector<double> w = halves_to_doubles(W, N * K, kind);
  std::vector<double> y(static_cast<std::size_t>(M * N), 0.0);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      // a*w is exact in fp64 (at most 11 + 11 significant bits, exponents within range), so
      // whether the compiler contracts this into an fma does not change the result.
      for (int64_t k = 0; k < K; ++k) acc += a[m * K + k] * w[n * K + k];
      if (bias != nullptr) acc += half_to_double(bias[n], kind);
      y[m * N + n] = acc;
    }
  }
  return y;
}

std::vector<uint16_t> round_output(const std::vector<double>& y, Half kind) {
  detail::check_half("round_output", kind);
  std::vector<uint16_t> out(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) out[i] = round_to_half(y[i], kind);
  return out;
}

}  // namespace nvfp4::ref
