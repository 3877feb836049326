// The model level of verification: a small synthetic prefill. Prompt tokens
// are embedded into small-integer activations, pass through a stack of
// operator calls with a nonlinearity between them, and a final projection
// gives logits whose greedy argmax per position are the "tokens". The SHA-256
// of those tokens must be the same on every route, on every backend and on
// every repeat (the seed's third level, made automatic).
//
// Exact by construction: weights are exact-mode NVFP4 (power-of-two scales),
// activations small integers, so every route computes the same sums.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "kernels/nvfp4_matmul/nvfp4_types.h"

namespace nvfp4 {

struct ModelSpec {
  int64_t tokens = 64;  // prompt length (rows of every activation)
  int64_t hidden = 128;
  int64_t vocab = 256;
  int layers = 8;  // hidden -> hidden calls; one more projects to the vocabulary
  DType dtype = DType::bf16;
  uint64_t seed = 7;
};

// How the prompt is pushed through the operator: `rows_per_call` tokens per
// call (64 reaches prefill, 8 or fewer the decode GEMVs), optionally forcing a route.
struct ModelRoute {
  std::string label;
  int64_t rows_per_call = 64;
  std::optional<Route> force;
};

struct ModelRun {
  std::vector<int32_t> tokens;
  std::string token_sha256;
  std::vector<std::string> routes_taken;  // one per operator call, in order
};

ModelRun run_model(nvh::Backend& backend, const ModelSpec& spec, const ModelRoute& route);

// The ways verify and the tests push the prompt through: prefill (natural,
// and each dequant forced), decode in chunks of 8 (natural, and the scalar
// GEMV forced).
std::vector<ModelRoute> model_routes();

}  // namespace nvfp4
