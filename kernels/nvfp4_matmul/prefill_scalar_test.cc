// prefill_scalar's two kernels, one per index width, against each other and
// the reference dequant, on every backend the build has. The 64-bit kernel
// otherwise runs only past 2^31 bytes (large_problem_test.cc, GPU only); here
// it runs on small shapes, in the paired case (even K and block_size, aligned
// scratch: the fast path) and in each case that leaves it.
#include "kernels/nvfp4_matmul/prefill_scalar.cuh"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/host_executor.h"
#include "harness/launch.h"
#include "reference/nvfp4_matmul/dequant.h"

namespace nvfp4 {
namespace {

struct ScalarShape {
  std::string name;
  int64_t N, K, block_size;
  std::size_t scratch_offset_bytes;  // 2: a scratch that is not 4-byte aligned
  bool paired;                       // what PrefillScalar::paired must decide
};

const ScalarShape kShapes[] = {
    {"paired", 5, 64, 16, 0, true},          {"odd_k", 3, 33, 16, 0, false},
    {"odd_block_size", 4, 30, 3, 0, false},  {"unaligned_scratch", 2, 40, 16, 2, false},
    {"odd_k_odd_block", 7, 45, 7, 0, false}, {"one_value", 1, 1, 16, 0, false},
};

class PrefillScalarWidths : public nvh::OnBackend {};

// Runs the kernel for index width Index on `shape` and returns the scratch.
template <class Index>
std::vector<uint16_t> run_width(nvh::Backend& b, const ScalarShape& s,
                                const std::vector<uint8_t>& packed,
                                const std::vector<uint8_t>& scales, float g) {
  nvh::Buffer B(b, packed.size()), S(b, scales.size()), G(b, sizeof g);
  nvh::Buffer out(b, static_cast<std::size_t>(s.N * s.K) * 2 + s.scratch_offset_bytes);
  B.upload(packed);
  S.upload(scales);
  G.upload(&g, sizeof g);
  b.fill(out.data(), 0xEE, out.bytes());
  auto* scratch =
      reinterpret_cast<uint16_t*>(static_cast<uint8_t*>(out.data()) + s.scratch_offset_bytes);
  const PrefillScalar::Params p =
      PrefillScalar::make_params(B.as<uint8_t>(), S.as<uint8_t>(), G.as<float>(), scratch, s.N, s.K,
                                 s.block_size, nvh::HalfKind::bf16);
  EXPECT_EQ(PrefillScalar::paired(p), s.paired) << s.name;
  nvh::launch<PrefillScalarOn<Index>>(b, PrefillScalar::shape(p, b.caps().multiprocessors), p);
  std::vector<uint8_t> all(out.bytes());
  out.download(all.data(), all.size());
  std::vector<uint16_t> values(static_cast<std::size_t>(s.N * s.K));
  std::memcpy(values.data(), all.data() + s.scratch_offset_bytes, values.size() * 2);
  return values;
}

TEST_P(PrefillScalarWidths, BothIndexWidthsEqualTheReferenceBitForBit) {
  std::mt19937 rng(7);
  for (const ScalarShape& s : kShapes) {
    std::vector<uint8_t> packed(static_cast<std::size_t>(s.N * ((s.K + 1) / 2)));
    std::vector<uint8_t> scales(
        static_cast<std::size_t>(s.N * ((s.K + s.block_size - 1) / s.block_size)));
    for (auto& x : packed) x = static_cast<uint8_t>(rng());
    for (auto& x : scales)
      x = static_cast<uint8_t>(rng() % 0x7F);  // finite, non-negative E4M3 (0x7F is NaN)
    const float g = 0.75f;
    const std::vector<uint16_t> expected =
        ref::dequantize(packed.data(), scales.data(), g, s.N, s.K, s.block_size, ref::Half::bf16);
    const std::vector<uint16_t> narrow = run_width<uint32_t>(backend(), s, packed, scales, g);
    const std::vector<uint16_t> wide = run_width<int64_t>(backend(), s, packed, scales, g);
    ASSERT_EQ(expected.size(), narrow.size());
    EXPECT_EQ(0, std::memcmp(expected.data(), narrow.data(), expected.size() * 2))
        << s.name << ": 32-bit kernel";
    EXPECT_EQ(0, std::memcmp(expected.data(), wide.data(), expected.size() * 2))
        << s.name << ": 64-bit kernel";
  }
}

// Stores by width, on the host executor (HostAccessLog): a byte's two
// values are one 4-byte store wherever they land as an aligned pair (the
// paired kernel; the general one too, as with an odd block_size and even
// K), two 2-byte stores where they do not (a scratch 2 bytes off, odd K's
// odd rows), and an odd K's last byte one 2-byte store (its high nibble is
// padding). The bits are the same either way (the test above): only the
// count shows a pair split in two.
TEST(PrefillScalarStores, APairIsOneFourByteStoreWhereverItIsAligned) {
  const std::unique_ptr<nvh::Backend> host = nvh::make_host_backend();
  struct Want {
    const char* shape;
    uint64_t four_byte, two_byte;
  };
  const Want wants[] = {
      {"paired", 5 * 32, 0},             // 32 bytes a row, all aligned
      {"odd_block_size", 4 * 15, 0},     // K = 30: 15 aligned pairs a row
      {"unaligned_scratch", 0, 2 * 40},  // every pair split
      {"one_value", 0, 1},               // the pad nibble's byte
      {"odd_k", 2 * 16,
       2 * 1 + 16 * 2 + 1},  // rows 0 and 2 start aligned (66 bytes a row), row 1 not
  };
  for (const Want& w : wants) {
    const ScalarShape* s = nullptr;
    for (const ScalarShape& shape : kShapes) {
      if (shape.name == w.shape) s = &shape;
    }
    ASSERT_NE(s, nullptr) << w.shape;
    const std::vector<uint8_t> packed(static_cast<std::size_t>(s->N * ((s->K + 1) / 2)), 0x21);
    const std::vector<uint8_t> scales(
        static_cast<std::size_t>(s->N * ((s->K + s->block_size - 1) / s->block_size)), 0x38);
    for (const bool wide : {false, true}) {
      nvh::HostAccessLog log;
      if (wide) {
        run_width<int64_t>(*host, *s, packed, scales, 1.0f);
      } else {
        run_width<uint32_t>(*host, *s, packed, scales, 1.0f);
      }
      EXPECT_EQ(log.global(nvh::memcheck::Op::store, 4), w.four_byte)
          << w.shape << (wide ? ", 64-bit kernel" : ", 32-bit kernel");
      EXPECT_EQ(log.global(nvh::memcheck::Op::store, 2), w.two_byte)
          << w.shape << (wide ? ", 64-bit kernel" : ", 32-bit kernel");
    }
  }
}

// The launch: one thread per packed byte in blocks of 256, no block with
// nothing to do, and at most 32 blocks per multiprocessor (8 x 32 on the host
// executor, which reports none); the grid-stride loop covers the rest.
TEST(PrefillScalarShape, OneThreadPerByteUpToTheCap) {
  struct Case {
    int64_t N, K;
    int multiprocessors;
    uint32_t blocks;
  };
  const Case cases[] = {
      {1, 2, 0, 1},        // 1 byte
      {1, 510, 0, 1},      // 255 bytes
      {1, 512, 0, 1},      // 256 bytes: exactly one block
      {1, 514, 0, 2},      // 257 bytes
      {3, 511, 0, 3},      // 3 rows of 256 bytes (odd K rounds up)
      {1, 20480, 1, 32},   // 40 blocks' worth, capped at 32 for one multiprocessor
      {64, 4096, 0, 256},  // 512 blocks' worth, capped at 8 x 32 on the host
  };
  for (const Case& c : cases) {
    const PrefillScalar::Params p = PrefillScalar::make_params(nullptr, nullptr, nullptr, nullptr,
                                                               c.N, c.K, 16, nvh::HalfKind::fp16);
    const nvh::LaunchShape s = PrefillScalar::shape(p, c.multiprocessors);
    EXPECT_EQ(s.grid.x, c.blocks) << "N = " << c.N << ", K = " << c.K
                                  << ", multiprocessors = " << c.multiprocessors;
    EXPECT_EQ(s.block.x, 256u);
  }
}

// narrow_indices sends a problem to the 32-bit kernel only where what that
// kernel computes in 32 bits stays in range: every byte index it divides by
// row_bytes (FastDivmod, exact for n < 2^31 only: harness/fast_divmod.h)
// below 2^31, its loop counter past the last trip (index plus two grid
// strides) below 2^32, and every scratch index (row * K + k) below 2^32.
// Computed here from the launch shape, apart from the predicate's own
// margin. The cases sit at the edges: N * K just under 2^32 with odd K,
// where the packed bytes (N * (K + 1) / 2) pass 2^31, and the largest
// problems the predicate takes.
TEST(PrefillScalarIndices, NarrowOnlyWhereEveryIndexFitsThe32BitKernel) {
  struct Case {
    int64_t N, K;
    bool narrow;  // what the predicate decides (checked too, so the test cannot pass vacuously)
  };
  const Case cases[] = {
      {4096, 4096, true},
      {1, 2, true},
      {(int64_t{1} << 29) - 1, 4, true},   // 2^30 - 2 bytes: under the predicate's 2^30 margin
      {int64_t{1} << 29, 4, false},        // 2^30 bytes: the margin's edge
      {858993459, 5, false},               // N * K = 2^32 - 1; 2.58e9 bytes
      {477218588, 9, false},               // N * K just under 2^32; 2.39e9 bytes
      {(int64_t{1} << 31) + 1, 1, false},  // 2^31 + 1 bytes
      {65536, 65536, false},               // N * K = 2^32
  };
  for (const Case& c : cases) {
    const PrefillScalar::Params p = PrefillScalar::make_params(nullptr, nullptr, nullptr, nullptr,
                                                               c.N, c.K, 16, nvh::HalfKind::bf16);
    const bool narrow = PrefillScalar::narrow_indices(p);
    EXPECT_EQ(narrow, c.narrow) << "N = " << c.N << ", K = " << c.K;
    if (!narrow) continue;
    for (const int multiprocessors : {0, 132, 1024}) {
      const nvh::LaunchShape s = PrefillScalar::shape(p, multiprocessors);
      const int64_t bytes = c.N * p.row_bytes;
      const int64_t stride = int64_t{s.grid.x} * s.block.x;
      EXPECT_LE(bytes, int64_t{1} << 31) << "N = " << c.N << ", K = " << c.K;
      EXPECT_LT(bytes - 1 + PrefillScalar::kBytesPerTrip * stride, int64_t{1} << 32)
          << "N = " << c.N << ", K = " << c.K << ", multiprocessors = " << multiprocessors;
      EXPECT_LE(c.N * c.K, int64_t{1} << 32) << "N = " << c.N << ", K = " << c.K;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, PrefillScalarWidths, ::testing::ValuesIn(nvh::backend_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nvfp4
