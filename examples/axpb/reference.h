// The reference: plain C++ over the host's floats, written apart from the
// kernels (std::fma rounds a * x + b once, as the kernels' fma_rn must).
#pragma once

#include <cmath>
#include <vector>

namespace axpb {

inline std::vector<float> reference(const std::vector<float>& x, float a, float b) {
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = std::fma(a, x[i], b);
  return y;
}

}  // namespace axpb
