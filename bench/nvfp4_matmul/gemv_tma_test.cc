// gemv_tma.cuh (the bench's sliced GEMV with its weights streamed by the
// TMA) against the sliced kernel it streams for (gemv_mma_slices.cuh): the same
// slices of the same inputs must give the same bits, exact or not, special
// values included, on every backend this build has that runs sm_90's TMA.
// Covers: both dtypes, bias on and off, the fast and the contract path, a
// ring of 3 and of 4 slots, slices shorter than the ring, a second group of
// 8 tiles with rows past N (the TMA's zero fill), columns past M. Its
// times in the bench's group tma are worth only what this holds.
#include "bench/nvfp4_matmul/gemv_tma.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/backend_fixture.h"
#include "kernels/nvfp4_matmul/gemv_mma.cuh"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "kernels/nvfp4_matmul/route_runs.h"
#include "properties/nvfp4_matmul/matmul_case.h"
#include "properties/nvfp4_matmul/value_class.h"

namespace nvfp4 {
namespace {

// One case's inputs on a backend, as run_case uploads them, for launching
// the two kernels directly; Y poisoned (all-ones: NaN) before each run.
class Uploaded {
 public:
  Uploaded(nvh::Backend& b, const CaseSpec& s, const CaseInputs& in)
      : b_(b),
        s_(s),
        A_(b, in.A.size() * 2, 0, "A"),
        B_(b, in.W.packed.size(), 0, "B"),
        scales_(b, in.W.scales.size(), 0, "weight_scale"),
        g_(b, sizeof(float), 0, "weight_scale_2"),
        bias_(b, in.bias.size() * 2, 0, "bias"),
        Y_(b, static_cast<std::size_t>(s.M * s.N) * 2, 0, "Y") {
    A_.upload(in.A);
    B_.upload(in.W.packed);
    scales_.upload(in.W.scales);
    g_.upload(&in.W.global_scale, sizeof(float));
    bias_.upload(in.bias);
    const ElemType t = s.dtype == DType::fp16 ? ElemType::fp16 : ElemType::bf16;
    args_.A = {A_.data(), {s.M, s.K}, t};
    args_.B = {B_.data(), {s.N, s.K / 2}, ElemType::e2m1x2};
    args_.weight_scale = {scales_.data(), {s.N, s.K / 16}, ElemType::e4m3};
    args_.weight_scale_2 = {g_.data(), {}, ElemType::fp32};
    if (s.bias) args_.bias = {bias_.data(), {s.N}, t};
    args_.Y = {Y_.data(), {s.M, s.N}, t};
    args_.block_size = 16;
  }

  // Y after `run` (run_gemv_slices or run_gemv_tma on these arguments).
  template <class Run>
  std::vector<uint16_t> output(Run run) {
    b_.fill(Y_.data(), 0xFF, Y_.bytes());
    run(b_, args_, describe_problem(args_));
    b_.synchronize();
    EXPECT_EQ(A_.damaged_guard_bytes() + B_.damaged_guard_bytes() + scales_.damaged_guard_bytes() +
                  Y_.damaged_guard_bytes(),
              0u)
        << s_.name();
    return Y_.download_as<uint16_t>(static_cast<std::size_t>(s_.M * s_.N));
  }

 private:
  nvh::Backend& b_;
  CaseSpec s_;
  nvh::GuardedBuffer A_, B_, scales_, g_, bias_, Y_;
  MatmulArgs args_;
};

class GemvTmaOnBackend : public nvh::OnBackend {
 protected:
  void SetUp() override {
    nvh::OnBackend::SetUp();
    if (IsSkipped()) return;
    if (!device_caps(backend()).wgmma) GTEST_SKIP() << "the TMA needs sm_90 (and an sm_90a build)";
  }

  // The TMA kernel with `stages` slots and the sliced kernel, both over
  // `slices` slices: the same bits (memcmp), and outputs that are not all
  // poison (the kernels wrote Y).
  void expect_same_bits(const CaseSpec& s, uint32_t slices, int stages) {
    const CaseInputs in = make_inputs(s);
    Uploaded up(backend(), s, in);
    const std::vector<uint16_t> sliced =
        up.output([slices](nvh::Backend& b, const MatmulArgs& a, const Problem& p) {
          run_gemv_slices(b, a, p, slices);
        });
    const std::vector<uint16_t> tma =
        up.output([slices, stages](nvh::Backend& b, const MatmulArgs& a, const Problem& p) {
          run_gemv_tma(b, gemv_operands(a, p), slices, stages);
        });
    ASSERT_EQ(sliced.size(), tma.size());
    EXPECT_EQ(std::memcmp(sliced.data(), tma.data(), tma.size() * 2), 0)
        << s.name() << ", " << slices << " slices, " << stages << " slots";
    const std::vector<uint16_t> one_ahead =
        up.output([slices, stages](nvh::Backend& b, const MatmulArgs& a, const Problem& p) {
          run_gemv_tma(b, gemv_operands(a, p), slices, stages, 1);
        });
    EXPECT_EQ(std::memcmp(sliced.data(), one_ahead.data(), tma.size() * 2), 0)
        << s.name() << ", " << slices << " slices, " << stages << " slots, 1 ahead of A";
    bool written = false;
    for (uint16_t y : tma) written |= y != 0xFFFF;
    EXPECT_TRUE(written) << s.name() << ": every output still the poison";
  }
};

constexpr int64_t kK = 16 * GemvMma::kStageK;  // 4096: 16 stages

TEST_P(GemvTmaOnBackend, GivesTheSlicedKernelsBits) {
  // One group, three tiles (rows past N in the box), M < 8, exact.
  expect_same_bits(make_case("adhoc", 3, 40, kK, 16, DType::bf16, true, true, 1), 3, 4);
  // Two groups (the second's box mostly past N), M = 8, not exact, both
  // rings, each wrapping (slices of 8 stages).
  const CaseSpec two = make_case("adhoc", 8, 136, kK, 16, DType::fp16, false, false, 2);
  expect_same_bits(two, 2, 4);
  expect_same_bits(two, 2, 3);
  // Slices of 2 stages: shorter than the ring (the prologue copies them all).
  expect_same_bits(make_case("adhoc", 1, 16, kK, 16, DType::fp16, true, false, 3), 8, 4);
  // Slices of 5 or 6 stages: the ring wraps once, unevenly.
  expect_same_bits(make_case("adhoc", 5, 24, kK + 256, 16, DType::bf16, true, false, 4), 3, 3);
}

TEST_P(GemvTmaOnBackend, GivesTheSlicedKernelsBitsOnTheContractPathAndSpecialValues) {
  for (ValueClass c : {ValueClass::g_not_pow2, ValueClass::g_nan, ValueClass::g_huge,
                       ValueClass::a_nan, ValueClass::scale_nan_7f, ValueClass::a_neg_zero}) {
    for (DType t : {DType::fp16, DType::bf16}) {
      CaseSpec s = make_case("adhoc", 2, 24, kK, 16, t, true, false, 6);
      s.value_class = c;
      expect_same_bits(s, 2, 4);
    }
  }
}

TEST(GemvMmaTma, TakesWholeStagesOfAlignedWeights) {
  GemvOperands p{};
  alignas(16) static uint8_t bytes[64];
  p.packed = bytes;
  p.scales = bytes;
  p.K = kK;
  EXPECT_TRUE(GemvMmaTma::takes_shape(p));
  p.K = kK + 128;  // a half stage: a scale row of 8 bytes, below the TMA's 16
  EXPECT_FALSE(GemvMmaTma::takes_shape(p)) << "K = " << p.K;
  p.K = kK;
  p.scales = bytes + 4;
  EXPECT_FALSE(GemvMmaTma::takes_shape(p)) << "scales 4 bytes past 16-byte alignment";
  p.scales = bytes;
  p.packed = bytes + 8;
  EXPECT_FALSE(GemvMmaTma::takes_shape(p)) << "codes 8 bytes past 16-byte alignment";
}

// What the launcher refuses, each named, before any kernel runs.
TEST(GemvMmaTma, RunRefusesWhatItCannotTakeNamingTheValue) {
  auto host = nvh::make_host_backend();
  alignas(16) static uint8_t bytes[64];
  GemvOperands p{};
  p.packed = bytes;
  p.scales = bytes;
  p.M = 1;
  p.N = 16;
  p.K = kK;
  const auto message = [&](uint32_t slices, int stages) -> std::string {
    try {
      run_gemv_tma(*host, p, slices, stages);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message(4, 5).find("stages = 5"), std::string::npos) << message(4, 5);
  try {
    run_gemv_tma(*host, p, 4, 4, 2);
    ADD_FAILURE() << "ahead = 2 taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ahead = 2"), std::string::npos) << e.what();
  }
  EXPECT_NE(message(17, 4).find("slices = 17"), std::string::npos) << message(17, 4);
  EXPECT_NE(message(0, 4).find("slices = 0"), std::string::npos) << message(0, 4);
  p.K = kK + 128;
  EXPECT_NE(message(4, 4).find("K = 4224"), std::string::npos) << message(4, 4);
  p.K = kK;
  p.M = 9;
  EXPECT_NE(message(4, 4).find("M = 9"), std::string::npos) << message(4, 4);
}

INSTANTIATE_TEST_SUITE_P(Backends, GemvTmaOnBackend, ::testing::ValuesIn(nvh::backend_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace nvfp4
