// Reading the branch probes of probe.h on the host: which sites exist, and how
// often each one's condition was true and false, in the host executor or on
// the GPU. Operator-agnostic: a site is an (operator bank, file index, line)
// triple; the operator's probe file table turns the index into a path.
#pragma once

#include <cstdint>
#include <vector>

namespace nvh {
namespace probe {

struct SiteCount {
  uint32_t bank = 0;  // the operator's probe bank (OperatorSuite::probe_bank)
  uint32_t file = 0;  // index into the operator's probe file table
  uint32_t line = 0;
  uint64_t taken = 0;      // condition true
  uint64_t not_taken = 0;  // condition false
};

enum class Counters { host, device };

// Every registered site, plus any counted slot that was not registered,
// sorted by (bank, file, line). Empty when nothing compiled has probes on.
// Reading the device counters waits for the GPU; without CUDA they are zero.
std::vector<SiteCount> read_counts(Counters which);

// Zeroes the host counters and every device bank.
void reset_counts();

// The sites compiled into this program, sorted by (bank, file, line).
std::vector<SiteCount> registered_sites();

// How many device banks (nvcc translation units with probes) registered.
std::size_t device_bank_count();

}  // namespace probe
}  // namespace nvh
