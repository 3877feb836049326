#include "properties/nvfp4_matmul/model_prefill.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "harness/sha256.h"
#include "kernels/nvfp4_matmul/nvfp4_matmul.h"
#include "reference/nvfp4_matmul/e4m3.h"
#include "reference/nvfp4_matmul/float16.h"
#include "reference/nvfp4_matmul/packing.h"
#include "reference/nvfp4_matmul/quantize.h"

namespace nvfp4 {
namespace {

ref::Half ref_half(DType t) { return t == DType::fp16 ? ref::Half::fp16 : ref::Half::bf16; }

// One layer's weights in exact mode: random codes, block scales 2^-2..2^0 and
// weight_scale_2 = 2^-3, so products of small-integer activations stay on a
// coarse power-of-two grid far inside fp32's 24 bits.
ref::QuantizedWeight layer_weight(std::mt19937_64& rng, int64_t N, int64_t K) {
  std::uniform_int_distribution<int> code(0, 15), exponent(-2, 0);
  std::vector<uint8_t> codes(static_cast<std::size_t>(N * K));
  for (auto& c : codes) c = static_cast<uint8_t>(code(rng));
  ref::QuantizedWeight q;
  q.N = N;
  q.K = K;
  q.block_size = 16;
  q.packed = ref::pack_e2m1_rows(codes, N, K);
  q.scales.resize(static_cast<std::size_t>(N * ref::scale_blocks_per_row(K, 16)));
  for (auto& s : q.scales) s = ref::float_to_e4m3(std::ldexp(1.0f, exponent(rng)));
  q.global_scale = 0.125f;
  return q;
}

// The nonlinearity: halve, truncate towards zero, clip to [-3, 3]. Keeps
// activations small integers, so the next layer's sums stay exact, and keeps
// their sign and spread (a layer's outputs have a spread of about 4), so the
// tokens depend on the prompt instead of collapsing to one answer.
uint16_t activate(uint16_t y_bits, ref::Half kind) {
  const double y = ref::half_to_double(y_bits, kind);
  const double v = std::clamp(std::trunc(y / 2.0), -3.0, 3.0);
  return ref::round_to_half(v, kind);
}

struct Layer {
  nvh::Buffer packed, scales, g;
  int64_t N, K;
};

Layer upload_layer(nvh::Backend& backend, const ref::QuantizedWeight& q) {
  Layer l{nvh::Buffer(backend, q.packed.size()), nvh::Buffer(backend, q.scales.size()),
          nvh::Buffer(backend, sizeof(float)), q.N, q.K};
  l.packed.upload(q.packed);
  l.scales.upload(q.scales);
  l.g.upload(&q.global_scale, sizeof(float));
  return l;
}

// Y[rows, N] = X[rows, K] * W^T through the operator, `rows_per_call` rows at a time.
std::vector<uint16_t> apply_layer(nvh::Backend& backend, const Layer& layer,
                                  const std::vector<uint16_t>& x, int64_t rows, DType dtype,
                                  const ModelRoute& route, ModelRun& run) {
  std::vector<uint16_t> y(static_cast<std::size_t>(rows * layer.N));
  const ElemType t = elem_type(dtype);
  for (int64_t r0 = 0; r0 < rows; r0 += route.rows_per_call) {
    const int64_t m = std::min(route.rows_per_call, rows - r0);
    nvh::Buffer A(backend, static_cast<std::size_t>(m * layer.K) * 2),
        Y(backend, static_cast<std::size_t>(m * layer.N) * 2);
    A.upload(x.data() + r0 * layer.K, static_cast<std::size_t>(m * layer.K) * 2);
    MatmulArgs args;
    args.A = {A.data(), {m, layer.K}, t};
    args.B = {layer.packed.data(), {layer.N, layer.K / 2}, ElemType::e2m1x2};
    args.weight_scale = {layer.scales.data(), {layer.N, layer.K / 16}, ElemType::e4m3};
    args.weight_scale_2 = {layer.g.data(), {}, ElemType::fp32};
    args.Y = {Y.data(), {m, layer.N}, t};
    args.block_size = 16;
    Options options;
    options.force_route = route.force;
    run.routes_taken.push_back(route_name(run_matmul(backend, args, options).route));
    backend.synchronize();
    Y.download(y.data() + r0 * layer.N, static_cast<std::size_t>(m * layer.N) * 2);
  }
  return y;
}

std::vector<int32_t> argmax_rows(const std::vector<uint16_t>& logits, int64_t rows, int64_t vocab,
                                 ref::Half kind) {
  std::vector<int32_t> tokens(static_cast<std::size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t best = 0;  // ties go to the lowest index
    for (int64_t v = 1; v < vocab; ++v) {
      if (ref::half_to_double(logits[r * vocab + v], kind) >
          ref::half_to_double(logits[r * vocab + best], kind))
        best = v;
    }
    tokens[r] = static_cast<int32_t>(best);
  }
  return tokens;
}

}  // namespace

ModelRun run_model(nvh::Backend& backend, const ModelSpec& spec, const ModelRoute& route) {
  std::mt19937_64 rng(spec.seed);
  const ref::Half kind = ref_half(spec.dtype);

  // The prompt and its embedding: small integers.
  std::uniform_int_distribution<int> token(0, static_cast<int>(spec.vocab) - 1), embed(-3, 3);
  std::vector<uint16_t> table(static_cast<std::size_t>(spec.vocab * spec.hidden));
  for (auto& e : table) e = ref::round_to_half(embed(rng), kind);
  std::vector<uint16_t> x(static_cast<std::size_t>(spec.tokens * spec.hidden));
  for (int64_t t = 0; t < spec.tokens; ++t) {
    const int64_t id = token(rng);
    std::copy_n(table.begin() + id * spec.hidden, spec.hidden, x.begin() + t * spec.hidden);
  }

  ModelRun run;
  for (int l = 0; l < spec.layers; ++l) {
    const Layer layer = upload_layer(backend, layer_weight(rng, spec.hidden, spec.hidden));
    std::vector<uint16_t> y = apply_layer(backend, layer, x, spec.tokens, spec.dtype, route, run);
    for (auto& v : y) v = activate(v, kind);
    x = std::move(y);
  }
  const Layer head = upload_layer(backend, layer_weight(rng, spec.vocab, spec.hidden));
  const std::vector<uint16_t> logits =
      apply_layer(backend, head, x, spec.tokens, spec.dtype, route, run);

  run.tokens = argmax_rows(logits, spec.tokens, spec.vocab, kind);
  run.token_sha256 =
      nvh::tensor_sha256("int32", {spec.tokens}, run.tokens.data(), run.tokens.size() * 4);
  return run;
}

std::vector<ModelRoute> model_routes() {
  return {{"prefill", 64, std::nullopt},
          {"prefill forced prefill_scalar", 64, Route::prefill_scalar},
          {"decode chunks of 8", 8, std::nullopt},
          {"decode chunks of 8 forced gemv_scalar", 8, Route::gemv_scalar},
          {"decode chunks of 8 forced prefill_vec8", 8, Route::prefill_vec8}};
}

}  // namespace nvfp4
