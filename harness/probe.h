// Branch probes for kernel bodies: NVH_PROBE_IN(files, cond) at a decision
// point counts how often `cond` was true and false there, on the GPU and in
// the host executor alike, so a run can say which kernel branches it reached
// on which backend (coverage/README.md). gcov cannot see into device code;
// these counts can, and lcov_trace.h writes them as an lcov tracefile.
//
// Off (the default: NVH_PROBES undefined) the macro is the bare `(cond)`, so
// kernels compile to exactly the code they would have without probes
// (coverage/same-code.sh checks the PTX and SASS). On (CMake option
// NVFP4_DEVICE_PROBES, presets `coverage` and `cuda-probes`) each evaluation
// adds one to a per-site counter: an atomic on the host, a warp-aggregated
// atomicAdd on the device.
//
// A site is (operator, file, line). Each operator owns a bank of slots (its
// probe bank, a small number it declares; no two operators in one program
// may share one), and the file is found in that operator's table of probe
// files at compile time (its index picks kMaxLine counters in the bank), so
// the counter index is a constant and can be mapped back to operator,
// file:line on the host. Rules: every file holding probes is in the table, sits below line
// kMaxLine, and has at most one probe per line (two would share a counter).
// A static registrar per site tells the host every site that was compiled,
// so sites that never ran are reported too (as not reached).
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness/kernel_ctx.h"

#if defined(NVH_PROBES) && !defined(__CUDA_ARCH__)
#include <atomic>
#endif

namespace nvh {
namespace probe {

inline constexpr uint32_t kMaxOperators = 4;  // probe banks, one per operator
inline constexpr uint32_t kMaxFiles = 16;     // files per operator table
inline constexpr uint32_t kMaxLine = 1024;    // lines per file that may hold a probe
inline constexpr uint32_t kBankSlots = kMaxFiles * kMaxLine;
inline constexpr uint32_t kSlots = kMaxOperators * kBankSlots;
inline constexpr uint32_t kNoSlot = 0xFFFFFFFFu;

// Whether `path` is `suffix` or ends with "/" + suffix (a whole path component).
constexpr bool path_ends_with(const char* path, const char* suffix) {
  std::size_t n = 0, m = 0;
  while (path[n]) ++n;
  while (suffix[m]) ++m;
  if (m > n) return false;
  for (std::size_t i = 0; i < m; ++i) {
    if (path[n - m + i] != suffix[i]) return false;
  }
  return m == n || path[n - m - 1] == '/';
}

// The counter slot of `line` in `file` of operator bank `bank`, or kNoSlot
// when the file is not in the table, the line is past kMaxLine or the bank
// past kMaxOperators.
template <std::size_t N>
constexpr uint32_t slot_of(uint32_t bank, const char* const (&files)[N], const char* file,
                           uint32_t line) {
  static_assert(N <= kMaxFiles, "probe file table longer than nvh::probe::kMaxFiles");
  if (bank >= kMaxOperators) return kNoSlot;
  for (std::size_t i = 0; i < N; ++i) {
    if (path_ends_with(file, files[i]))
      return line < kMaxLine ? bank * kBankSlots + static_cast<uint32_t>(i) * kMaxLine + line
                             : kNoSlot;
  }
  return kNoSlot;
}

constexpr uint32_t bank_of(uint32_t slot) { return slot / kBankSlots; }
constexpr uint32_t file_of(uint32_t slot) { return slot % kBankSlots / kMaxLine; }
constexpr uint32_t line_of(uint32_t slot) { return slot % kMaxLine; }

// Whether this build counts (NVFP4_DEVICE_PROBES).
constexpr bool enabled() {
#if defined(NVH_PROBES)
  return true;
#else
  return false;
#endif
}

// The registry behind the macro (probe.cc; probe_counts.h reads it).
// Adds `slot` to the sites compiled into this program; returns true.
bool register_site(uint32_t slot);
// The host half of each nvcc translation unit with probes registers its
// device bank: a reader of its 2 * kSlots counters and a resetter.
using DeviceBankReader = void (*)(unsigned long long* out);
using DeviceBankResetter = void (*)();
bool register_device_bank(DeviceBankReader read, DeviceBankResetter reset);

}  // namespace probe
}  // namespace nvh

#if defined(NVH_PROBES)

namespace nvh {
namespace probe {

#if !defined(__CUDA_ARCH__)
// Host counters: [2 * slot] true, [2 * slot + 1] false (probe.cc).
extern std::atomic<uint64_t> host_counts[2 * kSlots];

// One per site: its dynamic initializer registers the site at program start,
// whether or not the site ever runs.
template <uint32_t Slot>
struct Site {
  static const bool registered;
};
template <uint32_t Slot>
const bool Site<Slot>::registered = register_site(Slot);
#endif

#if defined(__CUDACC__)
// Device counters of this translation unit, laid out like host_counts. Static:
// without relocatable device code each .cu file is its own device module, so
// each has its own bank, and the host reads every bank (the registrar below).
static __device__ unsigned long long device_counts[2 * kSlots];

// One atomicAdd per direction per warp instead of one per thread: the lanes
// that evaluate the probe together vote, and the lowest of them adds the tally.
static __device__ __forceinline__ void count_on_device(uint32_t slot, bool c) {
#if defined(__CUDA_ARCH__)
  const unsigned active = __activemask();
  const unsigned taken = __ballot_sync(active, c);
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  if (lane == static_cast<unsigned>(__ffs(active) - 1)) {
    const unsigned yes = __popc(taken), no = __popc(active) - yes;
    if (yes) atomicAdd(&device_counts[2 * slot], static_cast<unsigned long long>(yes));
    if (no) atomicAdd(&device_counts[2 * slot + 1], static_cast<unsigned long long>(no));
  }
#else
  (void)slot;
  (void)c;
#endif
}
#endif  // __CUDACC__

template <uint32_t Slot>
NVH_HD NVH_INLINE bool hit(bool c) {
  static_assert(Slot != kNoSlot,
                "NVH_PROBE_IN: this file is missing from the probe file table, the probe is "
                "past kMaxLine, or the bank is past kMaxOperators");
#if defined(__CUDA_ARCH__)
  count_on_device(Slot, c);
#else
  static_cast<void>(&Site<Slot>::registered);  // odr-use: instantiates the registrar
  host_counts[2 * Slot + (c ? 0 : 1)].fetch_add(1, std::memory_order_relaxed);
#endif
  return c;
}

#if defined(__CUDACC__) && !defined(__CUDA_ARCH__)
namespace {
// cudaDeviceSynchronize first: kernels run on the backend's own stream.
inline void read_this_bank(unsigned long long* out) {
  cudaDeviceSynchronize();
  cudaMemcpyFromSymbol(out, device_counts, sizeof(device_counts));
}
inline void reset_this_bank() {
  cudaDeviceSynchronize();
  void* at = nullptr;
  if (cudaGetSymbolAddress(&at, device_counts) == cudaSuccess)
    cudaMemset(at, 0, sizeof(device_counts));
  cudaDeviceSynchronize();
}
[[maybe_unused]] const bool this_bank_registered =
    register_device_bank(&read_this_bank, &reset_this_bank);
}  // namespace
#endif

}  // namespace probe
}  // namespace nvh

#define NVH_PROBE_IN(bank, files, cond)                                       \
  (::nvh::probe::hit<::nvh::probe::slot_of(bank, files, __FILE__, __LINE__)>( \
      static_cast<bool>(cond)))

#else  // probes off: the bare condition, nothing else

#define NVH_PROBE_IN(bank, files, cond) (cond)

#endif
