// reference/nvfp4_matmul/packing.h -- the operator's packed E2M1 layout B[N, ceil(K/2)].
//
// Row n holds W[n, :]; element k is in byte k/2 of its row, the LOW nibble holding even k.
// Odd K pads the last byte of every row; the pad (high) nibble is written as 0. Readers ignore
// it (unpack does not reject a non-zero pad: it is not part of any value).
#pragma once

#include <cstdint>
#include <vector>

namespace nvfp4::ref {

// ceil(K/2); K >= 0.
int64_t packed_row_bytes(int64_t K);

// codes: [N, K] row-major, each 0..15. Returns [N, ceil(K/2)] bytes.
std::vector<uint8_t> pack_e2m1_rows(const std::vector<uint8_t>& codes, int64_t N, int64_t K);

// packed: [N, ceil(K/2)] bytes. Returns the [N, K] codes.
std::vector<uint8_t> unpack_e2m1_rows(const std::vector<uint8_t>& packed, int64_t N, int64_t K);

// The code of element (n, k) of a packed [*, ceil(K/2)] buffer; needs 0 <= k < K, n >= 0
// (the row count is not known here, so n is only checked for sign).
uint8_t packed_code_at(const uint8_t* packed, int64_t K, int64_t n, int64_t k);

}  // namespace nvfp4::ref
