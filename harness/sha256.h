// SHA-256 through OpenSSL's EVP interface, and the tensor digest that the
// harness uses to compare outputs bit for bit across routes, backends and runs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of this header.

namespace nvh {

using Sha256Digest = std::array<std::uint8_t, 32>;

// Streaming SHA-256. finish() returns the digest of everything passed to
// update() since construction or the previous finish(), and leaves the object
// ready for a new message. A failing OpenSSL call throws std::runtime_error
// naming the call. Movable, not copyable; a moved-from object may only be
// destroyed or assigned to.
class Sha256 {
 public:
  Sha256();
  // nbytes == 0 accepts data == nullptr; otherwise data must hold nbytes bytes.
  void update(const void* data, std::size_t nbytes);
  Sha256Digest finish();

 private:
  struct CtxFree {
    void operator()(evp_md_ctx_st* ctx) const noexcept;
  };
  std::unique_ptr<evp_md_ctx_st, CtxFree> ctx_;
};

// Lowercase hexadecimal, 64 characters.
std::string to_hex(const Sha256Digest& digest);

// to_hex of the SHA-256 of nbytes bytes at data.
std::string sha256_hex(const void* data, std::size_t nbytes);

// SHA-256 (lowercase hex) of a tensor: its dtype name, shape and bytes. The
// digest is taken over this byte string, every integer an unsigned 64-bit
// little-endian value (u64):
//
//   u64 len(dtype) | dtype bytes | u64 rank | u64 dim, rank times | u64 nbytes | data bytes
//
// e.g. dtype "f16", shape {2, 3}, 12 data bytes hashes
//   03 00 00 00 00 00 00 00  66 31 36
//   02 00 00 00 00 00 00 00  02 00 00 00 00 00 00 00  03 00 00 00 00 00 00 00
//   0c 00 00 00 00 00 00 00  <the 12 data bytes>
// Recompute it in Python (d: dtype bytes, s: shape, b: data bytes):
//   q = lambda v: struct.pack('<Q', v)
//   hashlib.sha256(q(len(d)) + d + q(len(s)) + b''.join(map(q, s)) + q(len(b)) + b).hexdigest()
// Equal bytes under another shape or dtype therefore hash differently. dtype
// is opaque: nbytes is not checked against it. Throws std::invalid_argument
// for a negative dimension, or data == nullptr with nbytes > 0.
std::string tensor_sha256(std::string_view dtype, const std::vector<std::int64_t>& shape,
                          const void* data, std::size_t nbytes);

}  // namespace nvh
