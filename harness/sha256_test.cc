#include "harness/sha256.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvh {
namespace {

std::string hex_of(const std::string& message) {
  return sha256_hex(message.data(), message.size());
}

// Known answers from FIPS 180-4's examples (NIST CSRC "SHA-256" example values).
TEST(Sha256, KnownAnswerAbc) {
  EXPECT_EQ(hex_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, KnownAnswerEmptyString) {
  EXPECT_EQ(sha256_hex(nullptr, 0),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, KnownAnswerTwoBlockMessage) {
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// Chunk sizes that straddle the 64-byte block boundary in every phase.
TEST(Sha256, KnownAnswerMillionAInUnevenChunks) {
  const std::string a(1000000, 'a');
  Sha256 hash;
  std::size_t done = 0;
  for (std::size_t step = 0; done < a.size(); ++step) {
    const std::size_t chunk = std::min<std::size_t>(1 + (step * 37) % 131, a.size() - done);
    hash.update(a.data() + done, chunk);
    done += chunk;
  }
  EXPECT_EQ(to_hex(hash.finish()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, FinishStartsANewMessage) {
  Sha256 hash;
  hash.update("abc", 3);
  hash.finish();
  EXPECT_EQ(to_hex(hash.finish()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, ToHexIsLowercaseAndOrdered) {
  Sha256Digest digest{};
  for (std::size_t i = 0; i < digest.size(); ++i) digest[i] = static_cast<std::uint8_t>(i * 8 + 7);
  EXPECT_EQ(to_hex(digest), "070f171f272f373f474f575f676f777f878f979fa7afb7bfc7cfd7dfe7eff7ff");
}

TEST(Sha256, UpdateRejectsNullDataWithBytes) {
  Sha256 hash;
  try {
    hash.update(nullptr, 4);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "Sha256::update: data = nullptr with nbytes = 4: data must point to nbytes bytes");
  }
}

TEST(TensorSha256, SameBytesDifferentShapeDiffer) {
  const std::vector<std::uint8_t> bytes(24, 0x5A);
  EXPECT_NE(tensor_sha256("f16", {3, 4}, bytes.data(), bytes.size()),
            tensor_sha256("f16", {4, 3}, bytes.data(), bytes.size()));
  EXPECT_NE(tensor_sha256("f16", {12}, bytes.data(), bytes.size()),
            tensor_sha256("f16", {12, 1}, bytes.data(), bytes.size()));
}

TEST(TensorSha256, SameBytesDifferentDtypeDiffer) {
  const std::vector<std::uint8_t> bytes(24, 0x5A);
  EXPECT_NE(tensor_sha256("f16", {12}, bytes.data(), bytes.size()),
            tensor_sha256("bf16", {12}, bytes.data(), bytes.size()));
  EXPECT_NE(tensor_sha256("f16", {12}, bytes.data(), bytes.size()),
            tensor_sha256("i16", {12}, bytes.data(), bytes.size()));
}

TEST(TensorSha256, DifferentBytesDiffer) {
  std::vector<std::uint8_t> bytes(24, 0x5A);
  const std::string before = tensor_sha256("f16", {12}, bytes.data(), bytes.size());
  bytes[23] ^= 1;
  EXPECT_NE(before, tensor_sha256("f16", {12}, bytes.data(), bytes.size()));
}

TEST(TensorSha256, Reproducible) {
  const std::vector<std::uint8_t> bytes = {1, 2, 3, 4, 5, 6};
  const std::vector<std::uint8_t> copy = bytes;
  EXPECT_EQ(tensor_sha256("u8", {2, 3}, bytes.data(), bytes.size()),
            tensor_sha256("u8", {2, 3}, copy.data(), copy.size()));
}

// The framing from sha256.h, rebuilt byte by byte: pins the format.
TEST(TensorSha256, FramingRecomputedByHand) {
  std::vector<std::uint8_t> bytes(12);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i);
  const std::uint8_t framing[] = {
      3,  0, 0, 0, 0, 0, 0, 0, 'f', '1', '6',  // dtype length, dtype
      2,  0, 0, 0, 0, 0, 0, 0,                 // rank
      2,  0, 0, 0, 0, 0, 0, 0,                 // dim 0
      3,  0, 0, 0, 0, 0, 0, 0,                 // dim 1
      12, 0, 0, 0, 0, 0, 0, 0,                 // byte count
  };
  Sha256 hash;
  hash.update(framing, sizeof framing);
  hash.update(bytes.data(), bytes.size());
  EXPECT_EQ(tensor_sha256("f16", {2, 3}, bytes.data(), bytes.size()), to_hex(hash.finish()));
}

// Values computed with the Python recipe in sha256.h (hashlib, not OpenSSL via this code).
TEST(TensorSha256, MatchesIndependentPythonRecipe) {
  std::vector<std::uint8_t> bytes(12);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i);
  EXPECT_EQ(tensor_sha256("f16", {2, 3}, bytes.data(), bytes.size()),
            "778383ce8cbb383aac017a420f331a5c4b67eb38729cd96e0a8e05824c49eaf4");
  EXPECT_EQ(tensor_sha256("u8", {}, nullptr, 0),
            "972409e7af356ea6dbb168369b665e8bdde097261ca7907658fe73e98692a713");
}

TEST(TensorSha256, RejectsNegativeDimension) {
  const std::uint8_t byte = 0;
  try {
    tensor_sha256("f16", {2, -3}, &byte, 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "tensor_sha256: shape[1] = -3: must be non-negative");
  }
}

TEST(TensorSha256, RejectsNullDataWithBytes) {
  try {
    tensor_sha256("f16", {8}, nullptr, 16);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "tensor_sha256: data = nullptr with nbytes = 16: data must point to nbytes bytes");
  }
}

TEST(TensorSha256, NullDataWithZeroBytesEqualsEmptyBuffer) {
  const std::uint8_t unused = 0xFF;
  EXPECT_EQ(tensor_sha256("f16", {0, 4}, nullptr, 0), tensor_sha256("f16", {0, 4}, &unused, 0));
}

}  // namespace
}  // namespace nvh
