// A test-only kernel of thread-block clusters (kernel_ctx.h:
// LaunchShape::cluster, cluster_sync, map_shared_rank): every thread of
// every block puts its part in its block's shared memory; after the
// cluster's barrier each thread adds the parts at its index over every
// block of the cluster in rank order (distributed shared memory) and the
// part of the next thread of its own block (ordered by the same barrier,
// which orders a block's own shared memory as a block barrier does), and
// stores the sum; a second barrier keeps every block's shared memory until
// the others have read it. The pattern of a K split whose slices meet in
// a cluster; `fault` breaks it once for the host executor's rules
// (cluster_test.cc).
#pragma once

#include <cstdint>

#include "harness/kernel_ctx.h"
#include "harness/portable_math.h"

namespace nvh {
namespace test_kernels {

enum class ClusterFault : uint8_t {
  none,
  read_before_sync,      // the first cluster_sync a block barrier: the others' parts not ordered
  exit_before_reads,     // the second left out: a block may exit while the others read it
  read_after_exit,       // rank 0 exits right after the first; the others read it after a barrier
  overwrite_after_read,  // rank 0 writes its parts again after the reads, before the second sync
  remote_store,          // a store through map_shared_rank (not emulated on the host)
  one_thread_exits,      // thread 0 of rank 1 returns before the first cluster_sync
  map_past_cluster,      // map_shared_rank to a rank past the cluster
  misaligned_remote,     // a 4-byte load 2 bytes into the next rank's parts
  remote_global_only,    // the next rank's parts through the global-only load (__ldg)
};

struct ClusterSums {
  struct Params {
    float* out;               // [grid.x blocks][threads]
    uint32_t cluster_blocks;  // the launch's cluster.x (clusters along x)
    ClusterFault fault;
  };
  static constexpr uint32_t kMaxBlockThreads = 1024;

  NVH_HD static float part_value(uint32_t cluster, uint32_t rank, uint32_t thread) {
    return static_cast<float>((rank + 1) * (thread + 1) + cluster);
  }

  template <class Ctx>
  NVH_HD static void body(Ctx& ctx, const Params& p) {
    const uint32_t threads = ctx.block_dim().x, t = ctx.thread_idx().x, size = p.cluster_blocks;
    const uint32_t rank = ctx.cluster_rank(), cluster = ctx.block_idx().x / size;
    float* parts = ctx.template shared_mem<float>();
    store_f32(parts + t, part_value(cluster, rank, t));
    if (p.fault == ClusterFault::one_thread_exits && rank == 1 && t == 0) return;
    if (p.fault != ClusterFault::read_before_sync) {
      ctx.cluster_sync();
    } else {
      ctx.sync_threads();  // the block's own parts ordered, the others' not
    }
    if (p.fault == ClusterFault::read_after_exit) {
      if (rank == 0) return;
      ctx.sync_threads();  // rank 0's threads take their turn, and exit, before these read
    }
    const uint32_t ranks = p.fault == ClusterFault::map_past_cluster ? size + 1 : size;
    float sum = 0.0f;
    for (uint32_t q = 0; q < ranks; ++q) {
      sum = add_rn(sum, load_generic_f32(ctx.map_shared_rank(parts, q) + t));
    }
    sum = add_rn(sum, load_generic_f32(parts + (t + 1) % threads));
    const uint8_t* next =
        reinterpret_cast<const uint8_t*>(ctx.map_shared_rank(parts, (rank + 1) % size));
    if (p.fault == ClusterFault::misaligned_remote)
      sum = add_rn(sum, float(load_generic_u32(next + 2)));
    if (p.fault == ClusterFault::remote_global_only) sum = add_rn(sum, float(load_u32(next)));
    if (p.fault == ClusterFault::remote_store) {
      store_f32(ctx.map_shared_rank(parts, (rank + 1) % size) + t, sum);
    }
    if (p.fault == ClusterFault::overwrite_after_read) {
      ctx.sync_threads();  // after the block's own reads: only the others' are not ordered
      if (rank == 0) store_f32(parts + t, sum);
    }
    store_f32(p.out + uint64_t{ctx.block_idx().x} * threads + t, sum);
    if (p.fault != ClusterFault::exit_before_reads) ctx.cluster_sync();
  }
};

}  // namespace test_kernels
}  // namespace nvh
