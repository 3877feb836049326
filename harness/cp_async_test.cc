// cp_async16_or_zero on every backend: with read true the 16 source bytes,
// with read false 16 zero bytes (PTX ISA, cp.async: the bytes past src-size
// are zero-filled, and src-size 0 reads nothing). On the GPU that is the
// hardware; on the host, the host executor's emulation.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "harness/backend_fixture.h"
#include "harness/cp_async_test_kernel.cuh"
#include "harness/host_executor.h"
#include "harness/launch.h"

namespace nvh {
namespace {

using test_kernels::CopyOrZero;

class CpAsyncOrZero : public OnBackend {};

TEST_P(CpAsyncOrZero, CopiesOrZeroFillsEachChunk) {
  std::vector<uint32_t> words(32 * 4);
  for (uint32_t i = 0; i < words.size(); ++i) words[i] = 0x9E3779B9u * (i + 1);
  Buffer src(backend(), words.size() * 4, "src"), out(backend(), words.size() * 4, "out");
  src.upload(words.data(), words.size() * 4);
  backend().fill(out.data(), 0xFF, words.size() * 4);
  launch<CopyOrZero>(backend(), LaunchShape{{1, 1, 1}, {32, 1, 1}, 32 * 16, true},
                     {src.as<uint32_t>(), out.as<uint32_t>()});
  backend().synchronize();
  const std::vector<uint32_t> got = out.download_as<uint32_t>(words.size());
  for (uint32_t t = 0; t < 32; ++t) {
    for (uint32_t w = 0; w < 4; ++w) {
      EXPECT_EQ(got[4 * t + w], CopyOrZero::reads(t) ? words[4 * t + w] : 0u)
          << "thread " << t << ", word " << w;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, CpAsyncOrZero, ::testing::ValuesIn(backend_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace nvh
