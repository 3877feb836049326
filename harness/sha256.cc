#include "harness/sha256.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <stdexcept>

namespace nvh {
namespace {

// OpenSSL queues the reason for a failure; the exception should carry it.
std::string openssl_error_text() {
  const unsigned long code = ERR_get_error();
  if (code == 0) return "no OpenSSL error queued";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  ERR_clear_error();
  return text;
}

// EVP calls report success as 1; anything else becomes an exception naming the call.
void check(int result, const char* call) {
  if (result != 1) {
    throw std::runtime_error(std::string("Sha256: ") + call + " failed: " + openssl_error_text());
  }
}

// Used at construction and after every finish(), so one object can hash many messages.
void digest_init(EVP_MD_CTX* ctx) {
  const EVP_MD* md = EVP_sha256();
  if (md == nullptr) throw std::runtime_error("Sha256: EVP_sha256 failed: " + openssl_error_text());
  check(EVP_DigestInit_ex(ctx, md, nullptr), "EVP_DigestInit_ex");
}

// Fixed byte order so a digest does not depend on the host's endianness.
void update_u64(Sha256& hash, std::uint64_t value) {
  std::uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::uint8_t>(value >> (8 * i));
  hash.update(bytes, sizeof bytes);
}

}  // namespace

void Sha256::CtxFree::operator()(evp_md_ctx_st* ctx) const noexcept { EVP_MD_CTX_free(ctx); }

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_) throw std::runtime_error("Sha256: EVP_MD_CTX_new failed: " + openssl_error_text());
  digest_init(ctx_.get());
}

void Sha256::update(const void* data, std::size_t nbytes) {
  if (nbytes == 0) return;
  if (data == nullptr) {
    throw std::invalid_argument("Sha256::update: data = nullptr with nbytes = " +
                                std::to_string(nbytes) + ": data must point to nbytes bytes");
  }
  check(EVP_DigestUpdate(ctx_.get(), data, nbytes), "EVP_DigestUpdate");
}

Sha256Digest Sha256::finish() {
  Sha256Digest digest{};
  unsigned int length = 0;
  check(EVP_DigestFinal_ex(ctx_.get(), digest.data(), &length), "EVP_DigestFinal_ex");
  if (length != digest.size()) {
    throw std::runtime_error("Sha256: EVP_DigestFinal_ex returned " + std::to_string(length) +
                             " bytes, expected 32");
  }
  digest_init(ctx_.get());
  return digest;
}

std::string to_hex(const Sha256Digest& digest) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * digest.size());
  for (std::uint8_t byte : digest) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 0xF]);
  }
  return hex;
}

std::string sha256_hex(const void* data, std::size_t nbytes) {
  Sha256 hash;
  hash.update(data, nbytes);
  return to_hex(hash.finish());
}

std::string tensor_sha256(std::string_view dtype, const std::vector<std::int64_t>& shape,
                          const void* data, std::size_t nbytes) {
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      throw std::invalid_argument("tensor_sha256: shape[" + std::to_string(i) +
                                  "] = " + std::to_string(shape[i]) + ": must be non-negative");
    }
  }
  if (data == nullptr && nbytes > 0) {
    throw std::invalid_argument("tensor_sha256: data = nullptr with nbytes = " +
                                std::to_string(nbytes) + ": data must point to nbytes bytes");
  }
  Sha256 hash;
  update_u64(hash, dtype.size());
  hash.update(dtype.data(), dtype.size());
  update_u64(hash, shape.size());
  for (std::int64_t dim : shape) update_u64(hash, static_cast<std::uint64_t>(dim));
  update_u64(hash, nbytes);
  hash.update(data, nbytes);
  return to_hex(hash.finish());
}

}  // namespace nvh
