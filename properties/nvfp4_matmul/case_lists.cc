#include "properties/nvfp4_matmul/case_lists.h"

#include <stdexcept>

namespace nvfp4 {
namespace {

CaseSpec seed_case(DType t, int64_t bs, int64_t M, int64_t N, int64_t K, bool bias) {
  return make_case("seed8", M, N, K, bs, t, bias, false, 32128);
}

// The seed's eight operator-hash configurations: fp16/bf16 x block_size 16/32
// x K aligned (K % 8 == 0: prefill_vec8) or not (prefill_scalar), N and K
// between 128 and 5120, M > 8 so the prefill dequant runs.
std::vector<CaseSpec> seed8() {
  return {seed_case(DType::fp16, 16, 16, 256, 5120, true),
          seed_case(DType::fp16, 16, 16, 5120, 130, false),
          seed_case(DType::fp16, 32, 16, 1024, 2048, true),
          seed_case(DType::fp16, 32, 16, 128, 4100, false),
          seed_case(DType::bf16, 16, 16, 2048, 512, false),
          seed_case(DType::bf16, 16, 16, 640, 1028, true),
          seed_case(DType::bf16, 32, 16, 128, 4096, true),
          seed_case(DType::bf16, 32, 16, 4096, 262, false)};
}

}  // namespace

std::vector<std::string> list_names() { return {"seed8"}; }

std::vector<CaseSpec> named_case_list(const std::string& name) {
  if (name == "seed8") return seed8();
  throw std::invalid_argument("named_case_list: name = " + name + ": unknown (known: seed8)");
}

}  // namespace nvfp4
