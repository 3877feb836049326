// GoogleTest support for suites that run on every backend a build has: the
// names to parameterize over, and a fixture that makes the backend or skips,
// saying why, when the machine has no GPU (ctest then reports Skipped); and
// the message of a launch's expected failure, for the tests that break a rule.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/backend.h"

namespace nvh {

inline std::vector<std::string> backend_names() {
#if defined(NVH_HAVE_CUDA)
  return {"host", "cuda"};
#else
  return {"host"};
#endif
}

// Makes the named backend, or skips the test naming why it cannot.
inline std::unique_ptr<Backend> backend_or_skip(const std::string& name) {
  if (name == "host") return make_host_backend();
  const std::string why = cuda_unavailable_reason();
  if (!why.empty()) return nullptr;
  return make_cuda_backend();
}

class OnBackend : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = backend_or_skip(GetParam());
    if (!backend_) GTEST_SKIP() << GetParam() << " backend: " << cuda_unavailable_reason();
  }
  Backend& backend() { return *backend_; }
  std::unique_ptr<Backend> backend_;
};

// The message of the exception of type E that `launch` throws; a test
// failure, and "", when it throws none.
template <class E, class F>
std::string thrown(F&& launch) {
  try {
    launch();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception of the expected type";
  return "";
}

}  // namespace nvh
