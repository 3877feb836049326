#include "properties/nvfp4_matmul/model_prefill.h"

#include <gtest/gtest.h>

#include <set>

namespace nvfp4 {
namespace {

// The token hash over every route, three repeats each, and every backend here.
TEST(ModelPrefill, TokenHashIsTheSameOnEveryRouteBackendAndRepeat) {
  ModelSpec spec;
  std::set<std::string> hashes, routes;
  for (auto& backend : nvh::make_available_backends()) {
    for (const ModelRoute& route : model_routes()) {
      for (int repeat = 0; repeat < 3; ++repeat) {
        const ModelRun run = run_model(*backend, spec, route);
        hashes.insert(run.token_sha256);
        routes.insert(run.routes_taken.begin(), run.routes_taken.end());
        ASSERT_EQ(run.tokens.size(), 64u);
        EXPECT_EQ(hashes.size(), 1u)
            << backend->name() << ", " << route.label << ", repeat " << repeat;
      }
    }
  }
  // The stack really went through the prefill and the decode routes.
  for (const char* r : {"prefill_vec8", "prefill_scalar", "gemv_mma", "gemv_scalar"})
    EXPECT_EQ(routes.count(r), 1u) << r;
}

// The tokens are not degenerate: a constant answer would hash the same anywhere.
TEST(ModelPrefill, TokensVary) {
  const ModelRun run = run_model(*nvh::make_host_backend(), ModelSpec{}, model_routes().front());
  const std::set<int32_t> distinct(run.tokens.begin(), run.tokens.end());
  EXPECT_GE(distinct.size(), 8u);
}

}  // namespace
}  // namespace nvfp4
