// dispatch_timing: what one select_route call costs on the host, in
// nanoseconds and heap allocations, for one problem of each route the chain
// can take on an sm_90 device. Not a test (timings vary with the machine);
// run it by hand: build/host/bench/dispatch_timing [calls] [repeats].
//
// Each figure is the median over the repeats of (time of `calls` calls) /
// calls; allocations are counted by the replaced global operator new below
// over the same calls. google-benchmark is not a dependency of this project,
// so this is written by hand with std::chrono.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "kernels/nvfp4_matmul/dispatch.h"

namespace {

std::atomic<long long> g_allocations{0};

}  // namespace

// Counting replacements of the global allocation functions: every
// std::string or std::vector growth in select_route goes through them.
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

using nvfp4::Caps;
using nvfp4::Options;
using nvfp4::Problem;

struct Sample {
  const char* name;
  Problem problem;
};

Problem shape(int64_t M, int64_t N, int64_t K, int64_t block_size) {
  Problem p;
  p.M = M;
  p.N = N;
  p.K = K;
  p.block_size = block_size;
  return p;
}

struct Figures {
  double ns_per_call;
  double allocations_per_call;
};

Figures time_calls(const Problem& p, const Caps& caps, long calls, int repeats) {
  std::vector<double> ns;
  const Options options;
  unsigned sink = 0;  // keeps the calls from being optimized away
  long long allocations = 0;
  for (int r = 0; r < repeats; ++r) {
    const long long before = g_allocations.load();
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) {
      Problem q = p;
      q.N += i & 1;  // a problem the compiler cannot hoist out of the loop
      sink += static_cast<unsigned>(nvfp4::select_route(q, caps, options).route);
    }
    const auto t1 = std::chrono::steady_clock::now();
    allocations = g_allocations.load() - before;
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                 static_cast<double>(calls));
  }
  std::sort(ns.begin(), ns.end());
  if (sink == 0xFFFFFFFFu) std::puts("");
  return {ns[ns.size() / 2], static_cast<double>(allocations) / static_cast<double>(calls)};
}

}  // namespace

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 1000000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 7;
  Caps caps;
  caps.sm = 90;
  caps.backend = "cuda";
  Problem unaligned_b = shape(512, 4096, 4096, 16);
  unaligned_b.b_address_mod16 = 2;
  const Sample samples[] = {
      {"empty          (M = 0)", shape(0, 4096, 4096, 16)},
      {"gemv_mma       (M = 1, N = K = 4096)", shape(1, 4096, 4096, 16)},
      {"gemv_scalar    (M = 1, K = 4000)", shape(1, 4096, 4000, 16)},
      {"prefill_vec8   (M = 512)", shape(512, 4096, 4096, 16)},
      {"prefill_scalar (M = 512, B % 16 = 2)", unaligned_b},
  };
  std::printf("select_route on sm_90, %ld calls, median of %d repeats\n", calls, repeats);
  for (const Sample& s : samples) {
    const Figures f = time_calls(s.problem, caps, calls, repeats);
    std::printf("  %-38s %8.1f ns/call %6.2f allocations/call\n", s.name, f.ns_per_call,
                f.allocations_per_call);
  }
  return 0;
}
