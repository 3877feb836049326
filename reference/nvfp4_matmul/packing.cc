#include "packing.h"

#include <string>

#include "checks.h"

namespace nvfp4::ref {

namespace {

uint8_t nibble(uint8_t byte, int64_t k) { return (k % 2 == 0) ? (byte & 0x0F) : (byte >> 4); }

}  // namespace

int64_t packed_row_bytes(int64_t K) {
  detail::check_nonnegative("packed_row_bytes", "K", K);
  return detail::ceil_div(K, 2);
}

std::vector<uint8_t> pack_e2m1_rows(const std::vector<uint8_t>& codes, int64_t N, int64_t K) {
  constexpr const char* fn = "pack_e2m1_rows";
  detail::check_nonnegative(fn, "N", N);
  detail::check_nonnegative(fn, "K", K);
  detail::check_size(fn, "codes", codes.size(), detail::checked_product(fn, "N", N, "K", K), "N*K");
  const int64_t row_bytes = packed_row_bytes(K);
  std::vector<uint8_t> packed(static_cast<std::size_t>(N * row_bytes), 0);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < K; ++k) {
      const uint8_t c = codes[static_cast<std::size_t>(n * K + k)];
      // The element's name is built only for the message: per code it cost more than the packing.
      if (c > 15) detail::check_code(fn, detail::element_name("codes", n, k), c);
      const int shift = (k % 2 == 0) ? 0 : 4;
      packed[static_cast<std::size_t>(n * row_bytes + k / 2)] |= static_cast<uint8_t>(c << shift);
    }
  }
  return packed;
}

std::vector<uint8_t> unpack_e2m1_rows(const std::vector<uint8_t>& packed, int64_t N, int64_t K) {
  constexpr const char* fn = "unpack_e2m1_rows";
  detail::check_nonnegative(fn, "N", N);
  detail::check_nonnegative(fn, "K", K);
  const int64_t count = detail::checked_product(fn, "N", N, "K", K);
  detail::check_size(fn, "packed", packed.size(), N * packed_row_bytes(K), "N*ceil(K/2)");
  std::vector<uint8_t> codes(static_cast<std::size_t>(count));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < K; ++k) {
      codes[static_cast<std::size_t>(n * K + k)] = packed_code_at(packed.data(), K, n, k);
    }
  }
  return codes;
}

uint8_t packed_code_at(const uint8_t* packed, int64_t K, int64_t n, int64_t k) {
  constexpr const char* fn = "packed_code_at";
  detail::check_nonnegative(fn, "K", K);
  detail::check_nonnegative(fn, "n", n);
  if (k < 0 || k >= K)
    detail::fail(fn, "k", std::to_string(k), "must be in [0, K = " + std::to_string(K) + ")");
  const int64_t row_bytes = packed_row_bytes(K);
  const int64_t row_start = detail::checked_product(fn, "n", n, "ceil(K/2)", row_bytes);
  const int64_t index = detail::checked_sum(fn, "n*ceil(K/2)", row_start, "k/2", k / 2);
  if (packed == nullptr) detail::fail(fn, "packed", "nullptr", "must point to the packed rows");
  return nibble(packed[index], k);
}

}  // namespace nvfp4::ref
