#include "harness/backend.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "harness/host_memcheck.h"

namespace nvh {

std::optional<int> ctest_assigned_gpu(const char* gpus) {
  if (!gpus) return std::nullopt;
  // ctest writes "id:<id>,slots:<n>" for one resource of the group; the test asks for one GPU.
  const std::string text = gpus;
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("ctest_assigned_gpu: CTEST_RESOURCE_GROUP_0_GPUS = " + text +
                                 ": " + why);
  };
  if (text.rfind("id:", 0) != 0) throw bad("expected \"id:<device>,slots:<n>\"");
  const std::size_t end = text.find(',');
  const std::string id = text.substr(3, end == std::string::npos ? std::string::npos : end - 3);
  if (id.empty() || id.size() > 6 || id.find_first_not_of("0123456789") != std::string::npos) {
    throw bad("the id " + id +
              " is not a CUDA device ordinal (the spec files name GPUs 0, 1, ...)");
  }
  return std::stoi(id);
}

int default_cuda_device() {
  return ctest_assigned_gpu(std::getenv("CTEST_RESOURCE_GROUP_0_GPUS")).value_or(0);
}

uint32_t* Backend::zeroed_counters(std::size_t count) {
  if (count <= counter_count_) {
    if (kind() == BackendKind::host) {
      synchronize();
      const auto* c = static_cast<const uint32_t*>(counters_);
      for (std::size_t i = 0; i < counter_count_; ++i) {
        if (c[i] != 0) {
          throw std::logic_error("zeroed_counters: counter " + std::to_string(i) + " of " +
                                 std::to_string(counter_count_) + " holds " + std::to_string(c[i]) +
                                 ": a kernel left it there (its last arrival must wrap it to 0)");
        }
      }
    }
    return static_cast<uint32_t*>(counters_);
  }
  synchronize();  // a kernel may still be counting in the old ones
  if (counters_) release(counters_);
  counters_ = nullptr, counter_count_ = 0;  // as they are if the allocation throws
  counters_ = allocate(count * sizeof(uint32_t));
  counter_count_ = count;
  describe_allocation(counters_, 0, count * sizeof(uint32_t), "zeroed counters");
  fill(counters_, 0, count * sizeof(uint32_t));
  return static_cast<uint32_t*>(counters_);
}

void* Backend::workspace(std::size_t bytes) {
  if (bytes <= workspace_bytes_) return workspace_;
  synchronize();  // a kernel may still use the old one
  if (workspace_) release(workspace_);
  workspace_ = nullptr, workspace_bytes_ = 0;  // as they are if the allocation throws
  workspace_ = allocate(bytes);
  workspace_bytes_ = bytes;
  describe_allocation(workspace_, 0, bytes, "workspace");
  return workspace_;
}

void Backend::release_owned_memory() noexcept {
  if (counters_) release(counters_);
  counters_ = nullptr;
  counter_count_ = 0;
  if (workspace_) release(workspace_);
  workspace_ = nullptr;
  workspace_bytes_ = 0;
}

Buffer::Buffer(Backend& backend, std::size_t bytes, const std::string& label)
    : backend_(&backend), data_(bytes ? backend.allocate(bytes) : nullptr), bytes_(bytes) {
  if (data_ && !label.empty()) backend.describe_allocation(data_, 0, bytes, label);
}

Buffer::Buffer(Buffer&& other) noexcept
    : backend_(std::exchange(other.backend_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (data_) backend_->release(data_);
    backend_ = std::exchange(other.backend_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

Buffer::~Buffer() {
  if (data_) backend_->release(data_);
}

void Buffer::upload(const void* src, std::size_t bytes) {
  if (bytes > bytes_) {
    throw std::invalid_argument("Buffer::upload: bytes = " + std::to_string(bytes) +
                                ": larger than the buffer (" + std::to_string(bytes_) + ")");
  }
  if (bytes) backend_->copy_in(data_, src, bytes);
}

void Buffer::download(void* dst, std::size_t bytes) const {
  if (bytes > bytes_) {
    throw std::invalid_argument("Buffer::download: bytes = " + std::to_string(bytes) +
                                ": larger than the buffer (" + std::to_string(bytes_) + ")");
  }
  if (bytes) backend_->copy_out(dst, data_, bytes);
}

GuardedBuffer::GuardedBuffer(Backend& backend, std::size_t bytes, std::size_t payload_offset,
                             const std::string& label)
    : backend_(&backend),
      whole_(backend, bytes + payload_offset + 2 * kGuardBytes),
      bytes_(bytes),
      offset_(payload_offset) {
  std::vector<uint8_t> pattern(whole_.bytes());
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = guard_pattern(i);
  whole_.upload(pattern);
  backend.describe_allocation(whole_.data(), kGuardBytes + offset_, bytes_, label);
}

void GuardedBuffer::upload(const void* src, std::size_t bytes) {
  if (bytes > bytes_) {
    throw std::invalid_argument("GuardedBuffer::upload: bytes = " + std::to_string(bytes) +
                                ": larger than the payload (" + std::to_string(bytes_) + ")");
  }
  if (bytes) backend_->copy_in(data(), src, bytes);
}

std::size_t GuardedBuffer::damaged_guard_bytes() const {
  const auto all = whole_.download_as<uint8_t>(whole_.bytes());
  const std::size_t begin = kGuardBytes + offset_, end = begin + bytes_;
  std::size_t damaged = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if ((i < begin || i >= end) && all[i] != guard_pattern(i)) ++damaged;
  }
  return damaged;
}

namespace {

class HostBackend final : public Backend {
 public:
  HostBackend() { caps_.device_name = "host executor"; }
  ~HostBackend() override { release_owned_memory(); }
  BackendKind kind() const override { return BackendKind::host; }
  std::string arch() const override { return "host"; }
  const DeviceCaps& caps() const override { return caps_; }

  // Registered with the memory checks as `bytes` long, not the rounded
  // size: a kernel reading past what was asked for is wrong on a GPU too.
  void* allocate(std::size_t bytes) override {
    const std::size_t rounded = (bytes + 255) / 256 * 256;
    void* p = std::aligned_alloc(256, rounded ? rounded : 256);
    if (!p) throw std::bad_alloc();
    memcheck::register_allocation(p, bytes);
    return p;
  }
  void release(void* p) noexcept override {
    memcheck::unregister_allocation(p);
    std::free(p);
  }
  void describe_allocation(void* allocation, std::size_t offset, std::size_t bytes,
                           const std::string& label) override {
    memcheck::describe_allocation(allocation, offset, bytes, label);
  }
  void copy_in(void* dst, const void* src, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copy_out(void* dst, const void* src, std::size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void fill(void* dst, uint8_t byte, std::size_t bytes) override { std::memset(dst, byte, bytes); }
  void synchronize() override {}

 private:
  DeviceCaps caps_;
};

}  // namespace

std::unique_ptr<Backend> make_host_backend() { return std::make_unique<HostBackend>(); }

std::unique_ptr<Backend> make_best_backend() {
  if (cuda_unavailable_reason().empty()) return make_cuda_backend();
  return make_host_backend();
}

std::vector<std::unique_ptr<Backend>> make_available_backends() {
  std::vector<std::unique_ptr<Backend>> all;
  all.push_back(make_host_backend());
  if (cuda_unavailable_reason().empty()) all.push_back(make_cuda_backend());
  return all;
}

#if !defined(NVH_HAVE_CUDA)
std::string cuda_unavailable_reason() {
  return "this build has no CUDA backend (configure with the cuda preset)";
}
std::unique_ptr<Backend> make_cuda_backend(int) {
  throw BackendUnavailable(cuda_unavailable_reason());
}
#endif

}  // namespace nvh
