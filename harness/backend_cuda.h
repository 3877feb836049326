// The CUDA backend's own handles, for code compiled against the CUDA runtime
// (kernel launchers, the cuBLAS GEMM step).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "harness/backend.h"
#include "harness/tensor_map.h"

namespace nvh {

// Throws std::runtime_error naming the call, file and line when `status` is an error.
void throw_on_cuda_error(cudaError_t status, const char* call, const char* file, int line);
void throw_on_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);
#define NVH_CUDA_CHECK(call) ::nvh::throw_on_cuda_error((call), #call, __FILE__, __LINE__)
#define NVH_CUBLAS_CHECK(call) ::nvh::throw_on_cublas_error((call), #call, __FILE__, __LINE__)

// The largest power of two (up to 256) that divides the address: what
// cuBLASLt's heuristics must be told of each operand's alignment.
inline uint32_t address_alignment(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  uint32_t align = 256;
  while (align > 1 && a % align) align /= 2;
  return align;
}

// Writes map.encoded, the CUtensorMap of map's fields (tensor_map.h), through
// the driver's cuTensorMapEncodeTiled; throws std::runtime_error with the
// driver's code and the map's sizes if it refuses them.
void encode_tensor_map(TensorMap2d& map);

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device);
  ~CudaBackend() override;
  BackendKind kind() const override { return BackendKind::cuda; }
  std::string arch() const override;
  const DeviceCaps& caps() const override { return caps_; }
  void* allocate(std::size_t bytes) override;
  void release(void* p) noexcept override;
  void copy_in(void* dst, const void* src, std::size_t bytes) override;
  void copy_out(void* dst, const void* src, std::size_t bytes) override;
  void fill(void* dst, uint8_t byte, std::size_t bytes) override;
  void synchronize() override;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas();
  cublasLtHandle_t cublas_lt();

 private:
  int device_;
  DeviceCaps caps_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cublasLtHandle_t cublas_lt_ = nullptr;
};

}  // namespace nvh
