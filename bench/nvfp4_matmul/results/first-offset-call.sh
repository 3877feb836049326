#!/usr/bin/env bash
# Session of 2026-12-07 from 08:59 UTC: the wgmma kernel with each thread's prepacked word offset
# parked in shared memory once and read back each stage (one load, an add and a XOR a row), where
# ptxas recomputed it from the row and lane every stage (about 17 instructions a row). On an H200
# the call runs prepack-round-call.sh instead (build/carry6: main's binaries; items 5 and 6 are
# judged there). Elsewhere: the new binary's fused GPU tests (GPU = host, the prepack's), then
# base / new / new / base, the msweep's "prefill_fused prepacked bias" rows at M = 128, 256, 512 on
# ab-replays.sh's seven shapes and the 8K replay (prepacked, both), and once on prefill_vec8.
# build/carry8/bin.tgz: nvfp4-harness-base (main at 88d7caf), nvfp4-harness-new and
# kernels_tests (this change). Run as tag s1207o (2026-12-07, 09:33 UTC) with every wgmma kernel
# parking: one tile 0.967-0.983x main at M = 128, two tiles 0.999-1.030x at M = 256 and 512 and the
# replay 432.9 -> 440.6 ms. Then with FIRST_OFFSET_ONE_TILE=1 (tag s1207t) on the build that landed,
# where the one-tile kernel alone parks (the two-tile kernels' SASS is main's): the rows w128n128
# runs (M = 96 and 128) and no replay (its chunks of 256 run w256n128). PERF.md has both.
# Usage (device): [FIRST_OFFSET_ONE_TILE=1] bash bench/nvfp4_matmul/results/first-offset-call.sh TAG
set -uo pipefail
tag="${1:-offset}"
cd "$(dirname "$0")/../../.."
ab_bins=build/carry8/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_round_on_h200 "$tag"
ab_card
ab_only=(--only "prefill_fused prepacked bias M")
if [ "${FIRST_OFFSET_ONE_TILE:-0}" = 1 ]; then
  ab_ms=(--m 96 --m 128)
  ab_fused_ab no-replays
else
  ab_fused_ab
fi
