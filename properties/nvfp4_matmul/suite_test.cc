// The NVFP4 suite's golden group through the harness's verify driver.
#include "properties/nvfp4_matmul/suite.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "harness/verify_driver.h"

namespace nvfp4 {
namespace {

// A backend that says it is a GPU of the given architecture and holds host
// memory; it cannot launch (a host build has no CUDA launcher), so its cases
// fail, but verify's choices that depend on the device can be seen.
class FakeGpu : public nvh::Backend {
 public:
  FakeGpu(int major, int minor) {
    caps_.sm_major = major;
    caps_.sm_minor = minor;
    caps_.device_name = "fake GPU";
  }
  nvh::BackendKind kind() const override { return nvh::BackendKind::cuda; }
  std::string arch() const override { return "sm_" + std::to_string(caps_.sm()); }
  const nvh::DeviceCaps& caps() const override { return caps_; }
  void* allocate(std::size_t bytes) override {
    return std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  }
  void release(void* p) noexcept override { std::free(p); }
  void copy_in(void* dst, const void* src, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copy_out(void* dst, const void* src, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void fill(void* dst, uint8_t byte, std::size_t bytes) override { std::memset(dst, byte, bytes); }
  void synchronize() override {}

 private:
  nvh::DeviceCaps caps_;
};

std::string run_golden_level_on(int major, int minor, const std::string& dir) {
  nvh::VerifyOptions o;
  o.families = {"empty"};
  o.random_cases = 0;
  o.skip = {"primitives", "model"};
  o.out_dir = dir;
  std::ostringstream out;
  nvh::run_verify(
      nvfp4_suite(), [=] { return std::make_unique<FakeGpu>(major, minor); }, o, out);
  return out.str();
}

std::string temp_dir(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / ("nvfp4_verify_job_" + name)).string();
}

TEST(VerifyGoldenLevel, AGpuOtherThanTheH200IsSkippedSayingWhy) {
  const std::string dir = temp_dir("sm120");
  const std::string out = run_golden_level_on(12, 0, dir);
  const std::string why =
      "the golden GPU manifest (properties/nvfp4_matmul/golden/seed8.h200.json) is for the H200 "
      "(sm_90) only; "
      "this device is sm_120";
  EXPECT_NE(out.find("golden: SKIPPED: " + why), std::string::npos) << out;
  std::ifstream junit(dir + "/junit.xml");
  const std::string xml((std::istreambuf_iterator<char>(junit)), std::istreambuf_iterator<char>());
  EXPECT_NE(xml.find("SKIPPED: " + why), std::string::npos) << xml;
  std::filesystem::remove_all(dir);
}

TEST(VerifyGoldenLevel, AnSm90GpuIsComparedWithTheH200File) {
  const std::string dir = temp_dir("sm90");
  const std::string out = run_golden_level_on(9, 0, dir);
  // The fake cannot launch, so no digest matches; what matters is which file is named.
  EXPECT_NE(out.find("golden: 0 of 8 seed8 digests equal to "
                     "properties/nvfp4_matmul/golden/seed8.h200.json (built in)"),
            std::string::npos)
      << out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nvfp4
