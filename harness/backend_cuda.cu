#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

#include "harness/backend_cuda.h"

namespace nvh {

void throw_on_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                           ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
                           ")");
}

namespace {

// cuTensorMapEncodeTiled from the driver the runtime loaded, looked up once
// (the runtime's entry-point query, so nothing links libcuda itself).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    NVH_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                    cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
      throw std::runtime_error(
          "encode_tensor_map: the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or later)");
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

}  // namespace

void encode_tensor_map(TensorMap2d& map) {
  static_assert(sizeof(CUtensorMap) == sizeof(map.encoded),
                "TensorMap2d::encoded is a CUtensorMap");
  static_assert(alignof(CUtensorMap) <= alignof(TensorMap2d), "and aligned as one");
  const CUtensorMapDataType type = map.elem_bytes == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                   : map.elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                                         : CU_TENSOR_MAP_DATA_TYPE_UINT32;
  const cuuint64_t dims[2] = {map.cols, map.rows};
  const cuuint64_t strides[1] = {map.row_bytes};
  const cuuint32_t box[2] = {map.box_cols, map.box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult status = tensor_map_encoder()(
      reinterpret_cast<CUtensorMap*>(map.encoded), type, 2, const_cast<void*>(map.base), dims,
      strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      map.swizzle == TmaSwizzle::b128  ? CU_TENSOR_MAP_SWIZZLE_128B
      : map.swizzle == TmaSwizzle::b64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                       : CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS) {
    throw std::runtime_error("encode_tensor_map: cuTensorMapEncodeTiled returned " +
                             std::to_string(static_cast<int>(status)) + " for " +
                             std::to_string(map.rows) + " x " + std::to_string(map.cols) +
                             " elements of " + std::to_string(map.elem_bytes) + " bytes, box " +
                             std::to_string(map.box_rows) + " x " + std::to_string(map.box_cols));
  }
}

void throw_on_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                           ": " + cublasGetStatusName(status) + " (" +
                           cublasGetStatusString(status) + ")");
}

std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls are not poisoned
    return std::string("no usable CUDA device: cudaGetDeviceCount: ") + cudaGetErrorString(status);
  }
  if (count == 0) return "no CUDA device on this machine";
  return "";
}

std::unique_ptr<Backend> make_cuda_backend(int device) {
  const std::string why = cuda_unavailable_reason();
  if (!why.empty()) throw BackendUnavailable(why);
  return std::make_unique<CudaBackend>(device < 0 ? default_cuda_device() : device);
}

CudaBackend::CudaBackend(int device) : device_(device) {
  NVH_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  NVH_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  caps_.sm_major = prop.major;
  caps_.sm_minor = prop.minor;
  caps_.device_name = prop.name;
  caps_.multiprocessors = prop.multiProcessorCount;
  caps_.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  NVH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

CudaBackend::~CudaBackend() {
  cudaSetDevice(device_);
  release_owned_memory();
  if (cublas_lt_) cublasLtDestroy(cublas_lt_);
  if (cublas_) cublasDestroy(cublas_);
  if (stream_) cudaStreamDestroy(stream_);
}

std::string CudaBackend::arch() const {
  return "sm_" + std::to_string(caps_.sm_major) + std::to_string(caps_.sm_minor);
}

void* CudaBackend::allocate(std::size_t bytes) {
  void* p = nullptr;
  NVH_CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
  return p;
}

void CudaBackend::release(void* p) noexcept { cudaFree(p); }

void CudaBackend::copy_in(void* dst, const void* src, std::size_t bytes) {
  NVH_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
  NVH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::copy_out(void* dst, const void* src, std::size_t bytes) {
  NVH_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
  NVH_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::fill(void* dst, uint8_t byte, std::size_t bytes) {
  NVH_CUDA_CHECK(cudaMemsetAsync(dst, byte, bytes, stream_));
}

void CudaBackend::synchronize() { NVH_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

cublasHandle_t CudaBackend::cublas() {
  if (!cublas_) {
    NVH_CUBLAS_CHECK(cublasCreate(&cublas_));
    NVH_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  }
  return cublas_;
}

cublasLtHandle_t CudaBackend::cublas_lt() {
  if (!cublas_lt_) NVH_CUBLAS_CHECK(cublasLtCreate(&cublas_lt_));
  return cublas_lt_;
}

}  // namespace nvh
