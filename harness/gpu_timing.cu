#include <algorithm>
#include <stdexcept>

#include "harness/backend_cuda.h"
#include "harness/gpu_timing.h"

namespace nvh {
namespace {

CudaBackend& gpu_of(Backend& backend) {
  if (backend.kind() != BackendKind::cuda)
    throw std::invalid_argument("GPU timing needs the cuda backend, not " + backend.name());
  return static_cast<CudaBackend&>(backend);
}

class Events {
 public:
  explicit Events(int n) : events_(static_cast<std::size_t>(n)) {
    for (auto& e : events_) NVH_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~Events() {
    for (auto& e : events_) cudaEventDestroy(e);
  }
  cudaEvent_t operator[](int i) const { return events_[static_cast<std::size_t>(i)]; }

 private:
  std::vector<cudaEvent_t> events_;
};

// Holds the GPU for a while so that the host can queue every timed launch
// behind it; the timed launches then run back to back, and host-side launch
// overhead (ours, cuBLAS's) cannot open gaps that the events would count.
__global__ void hold_gpu(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

constexpr long long kHoldCycles =
    40'000'000;  // ~20 ms at 2 GHz; queuing 100s of launches takes less

}  // namespace

TimingStats time_launches(Backend& backend, int warmup, int reps,
                          const std::function<void(int)>& launch) {
  CudaBackend& gpu = gpu_of(backend);
  for (int i = 0; i < warmup; ++i) launch(i);
  // Every launch between its own pair of events, all queued behind hold_gpu.
  Events events(2 * reps);
  hold_gpu<<<1, 1, 0, gpu.stream()>>>(kHoldCycles);
  NVH_CUDA_CHECK(cudaGetLastError());
  for (int i = 0; i < reps; ++i) {
    NVH_CUDA_CHECK(cudaEventRecord(events[2 * i], gpu.stream()));
    launch(warmup + i);
    NVH_CUDA_CHECK(cudaEventRecord(events[2 * i + 1], gpu.stream()));
  }
  NVH_CUDA_CHECK(cudaStreamSynchronize(gpu.stream()));
  std::vector<double> us(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    NVH_CUDA_CHECK(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
    us[static_cast<std::size_t>(i)] = 1000.0 * ms;
  }
  return summarize(std::move(us));
}

TimingStats time_back_to_back(Backend& backend, int warmup, int trials, int launches,
                              const std::function<void(int)>& launch) {
  CudaBackend& gpu = gpu_of(backend);
  for (int i = 0; i < warmup; ++i) launch(i);
  std::vector<double> per_call;
  Events events(2);
  int next = warmup;
  for (int trial = 0; trial < trials; ++trial) {
    hold_gpu<<<1, 1, 0, gpu.stream()>>>(kHoldCycles);
    NVH_CUDA_CHECK(cudaGetLastError());
    NVH_CUDA_CHECK(cudaEventRecord(events[0], gpu.stream()));
    for (int i = 0; i < launches; ++i) launch(next++);
    NVH_CUDA_CHECK(cudaEventRecord(events[1], gpu.stream()));
    NVH_CUDA_CHECK(cudaStreamSynchronize(gpu.stream()));
    float ms = 0;
    NVH_CUDA_CHECK(cudaEventElapsedTime(&ms, events[0], events[1]));
    per_call.push_back(1000.0 * ms / launches);
  }
  return summarize(std::move(per_call));
}

double measure_copy_ceiling(Backend& backend, std::size_t bytes, int reps) {
  CudaBackend& gpu = gpu_of(backend);
  Buffer src(backend, bytes), dst(backend, bytes);
  backend.fill(src.data(), 0x5A, bytes);
  const TimingStats t = time_launches(backend, 3, reps, [&](int) {
    NVH_CUDA_CHECK(
        cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, gpu.stream()));
  });
  return 2.0 * static_cast<double>(bytes) / (t.median_us * 1e-6);
}

void copy_on_device(Backend& backend, void* dst, const void* src, std::size_t bytes) {
  NVH_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, gpu_of(backend).stream()));
}

double measure_fill_ceiling(Backend& backend, std::size_t bytes, int reps) {
  CudaBackend& gpu = gpu_of(backend);
  Buffer dst(backend, bytes);
  const TimingStats t = time_launches(backend, 3, reps, [&](int i) {
    NVH_CUDA_CHECK(cudaMemsetAsync(dst.data(), 0x11 * (i % 15 + 1), bytes, gpu.stream()));
  });
  return static_cast<double>(bytes) / (t.median_us * 1e-6);
}

LaunchTimes time_each_launch(Backend& backend, int launches,
                             const std::function<void(int)>& launch) {
  CudaBackend& gpu = gpu_of(backend);
  LaunchTimes t;
  if (launches <= 0) return t;
  Events events(2 * launches);
  hold_gpu<<<1, 1, 0, gpu.stream()>>>(kHoldCycles);
  NVH_CUDA_CHECK(cudaGetLastError());
  for (int i = 0; i < launches; ++i) {
    NVH_CUDA_CHECK(cudaEventRecord(events[2 * i], gpu.stream()));
    launch(i);
    NVH_CUDA_CHECK(cudaEventRecord(events[2 * i + 1], gpu.stream()));
  }
  NVH_CUDA_CHECK(cudaStreamSynchronize(gpu.stream()));
  t.us.resize(static_cast<std::size_t>(launches));
  for (int i = 0; i < launches; ++i) {
    float ms = 0;
    NVH_CUDA_CHECK(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
    t.us[static_cast<std::size_t>(i)] = 1000.0 * ms;
  }
  float span_ms = 0;
  NVH_CUDA_CHECK(cudaEventElapsedTime(&span_ms, events[0], events[2 * launches - 1]));
  t.span_us = 1000.0 * span_ms;
  return t;
}

}  // namespace nvh
