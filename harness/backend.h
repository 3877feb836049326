// Backends: where operator inputs live and where kernels run. `host` is the
// CPU with the host executor; `cuda` is a GPU. Tests and the CLI hold a
// Backend and never branch on what it is, except to pick a kernel launcher.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvh {

enum class BackendKind { host, cuda };

struct DeviceCaps {
  int sm_major = 0, sm_minor = 0;  // compute capability; the host executor reports none (0.0)
  std::string device_name;
  int multiprocessors = 0;
  std::size_t l2_bytes = 0;
  int sm() const { return sm_major * 10 + sm_minor; }
};

// Thrown when a backend cannot be made here (no GPU, or not built with CUDA).
class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  std::string name() const { return kind() == BackendKind::host ? "host" : "cuda"; }
  // What the records call the architecture: "host" or "sm_90".
  virtual std::string arch() const = 0;
  virtual const DeviceCaps& caps() const = 0;

  // Allocations are 256-byte aligned on every backend (cudaMalloc's
  // guarantee), so pointer alignment, and with it the route taken, is the
  // same on the host as on the GPU.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* p) noexcept = 0;
  // Names an allocation and narrows what kernels may touch of it to
  // [offset, offset + bytes) (a guarded buffer's payload), for the host
  // executor's memory checks (host_memcheck.h), whose messages then say
  // "Y" and not just an address. A GPU backend keeps nothing: there
  // compute-sanitizer checks against the allocations themselves.
  virtual void describe_allocation(void* /*allocation*/, std::size_t /*offset*/,
                                   std::size_t /*bytes*/, const std::string& /*label*/) {}
  virtual void copy_in(void* dst, const void* src, std::size_t bytes) = 0;   // host -> backend
  virtual void copy_out(void* dst, const void* src, std::size_t bytes) = 0;  // backend -> host
  virtual void fill(void* dst, uint8_t byte, std::size_t bytes) = 0;
  virtual void synchronize() = 0;

  // `count` 32-bit counters that start at zero, for kernels whose blocks
  // count their arrivals (kernel_ctx.h: atomic_inc_global wraps a counter
  // back to zero with its last arrival). Every kernel leaves the counters
  // it used at zero, so the backend zeroes them once and every launch after
  // reuses them; a call asking for more than it holds makes a new zeroed
  // allocation (after a synchronize). The host backend checks that the
  // counters it hands out again are all zero, and throws std::logic_error
  // naming the first that is not (a kernel that did not wrap its count).
  uint32_t* zeroed_counters(std::size_t count);

  // At least `bytes` of backend memory the backend keeps between calls, for
  // a call's intermediate results (cuBLASLt's workspace and the GEMM step's
  // fp32 accumulator, gemv_mma's K-slice parts), so that a call allocates
  // nothing once the workspace is large enough, as a cuBLAS handle keeps
  // its workspace. Kernels run in order on the
  // backend's one stream, so a call may use all of it; its contents do not
  // outlive the call. Asking for more than it holds synchronizes, frees it
  // and makes a larger one. 256-byte aligned; named "workspace" in
  // memory-check messages.
  void* workspace(std::size_t bytes);

 protected:
  // Every backend's destructor calls this (release() is the derived
  // class's): frees the counters and the workspace.
  void release_owned_memory() noexcept;

 private:
  void* counters_ = nullptr;
  std::size_t counter_count_ = 0;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
};

// Backend memory owned by one object. `label` names it in memory-check messages.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Backend& backend, std::size_t bytes, const std::string& label = "");
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  void* data() const { return data_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* src, std::size_t bytes);
  void download(void* dst, std::size_t bytes) const;
  template <class T>
  void upload(const std::vector<T>& v) {
    upload(v.data(), v.size() * sizeof(T));
  }
  template <class T>
  std::vector<T> download_as(std::size_t count) const {
    std::vector<T> v(count);
    download(v.data(), count * sizeof(T));
    return v;
  }

 private:
  Backend* backend_ = nullptr;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// A buffer with guard bytes on both sides of the payload, filled with a
// pattern that any stray write outside [data(), data() + bytes()) changes.
// `payload_offset` shifts the payload off the 256-byte alignment (to test
// misaligned pointers) without shrinking the guards. Only the payload is
// the allocation's usable range (Backend::describe_allocation), so on the
// host executor a kernel's read of a guard byte fails too, not only a write.
// `label` names the payload in memory-check messages.
class GuardedBuffer {
 public:
  static constexpr std::size_t kGuardBytes = 512;
  GuardedBuffer(Backend& backend, std::size_t bytes, std::size_t payload_offset = 0,
                const std::string& label = "");
  void* data() const { return static_cast<unsigned char*>(whole_.data()) + kGuardBytes + offset_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data());
  }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* src, std::size_t bytes);
  template <class T>
  void upload(const std::vector<T>& v) {
    upload(v.data(), v.size() * sizeof(T));
  }
  template <class T>
  std::vector<T> download_as(std::size_t count) const {
    std::vector<T> v(count);
    whole_backend().copy_out(v.data(), data(), count * sizeof(T));
    return v;
  }
  // Guard bytes that no longer hold the pattern; 0 means untouched.
  std::size_t damaged_guard_bytes() const;
  static uint8_t guard_pattern(std::size_t i) { return static_cast<uint8_t>(0xA5 ^ (i * 31)); }

 private:
  Backend& whole_backend() const { return *backend_; }
  Backend* backend_;
  Buffer whole_;
  std::size_t bytes_, offset_;
};

std::unique_ptr<Backend> make_host_backend();
// Throws BackendUnavailable, naming why, when no CUDA device can be used.
// device < 0: default_cuda_device().
std::unique_ptr<Backend> make_cuda_backend(int device = -1);
// The GPU ctest assigned a test that declares RESOURCE_GROUPS "gpus:1"
// (`ctest --resource-spec-file ci/device/resources-2gpu.json`): the id in
// CTEST_RESOURCE_GROUP_0_GPUS ("id:1,slots:1"), which the spec files name by
// CUDA device ordinal. nullopt for null (ctest assigned none). Throws
// std::invalid_argument naming the variable and its value when it is malformed.
std::optional<int> ctest_assigned_gpu(const char* gpus);
// ctest_assigned_gpu($CTEST_RESOURCE_GROUP_0_GPUS), else device 0: so tests
// that ctest spreads over several GPUs each use the one it gave them.
int default_cuda_device();
// Empty when make_cuda_backend() would succeed, else the reason it would not.
std::string cuda_unavailable_reason();
// The GPU if one can be used, else the host executor.
std::unique_ptr<Backend> make_best_backend();
// Every backend usable here, host first.
std::vector<std::unique_ptr<Backend>> make_available_backends();

}  // namespace nvh
