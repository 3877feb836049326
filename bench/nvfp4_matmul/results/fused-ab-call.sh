#!/usr/bin/env bash
# Session of 2026-12-06 from 09:11 UTC: an A/B of prefill_fused, new against main (base), one device
# call a TAG: the co-resident and fused GPU tests on the new binaries, old / new / new / old bench
# runs of prefill_fused with bias on the replay's four shapes and the sweep's three at M = 128, 256
# and 512, then the 8K replay base / new / new / base and on prefill_vec8. Its runs:
#   among, among2  the K split's slices added by the tile's own blocks in a co-resident launch
#                  (among-slices-experiment.patch: a fence a thread, then one a block; not kept)
#   split          the wgmma kernel instantiated apart for plans that store parts and plans that
#                  store Y (split-epilogue-experiment.patch; not kept)
# build/carry2/bin.tgz holds nvfp4-harness-base (main), nvfp4-harness-new, kernels_tests and
# harness_exec_tests (new); the bench runs, the replays and the comparison are ab-replays.sh's.
# Usage (device): bash bench/nvfp4_matmul/results/fused-ab-call.sh TAG
set -uo pipefail
tag="${1:-among}"
cd "$(dirname "$0")/../../.."
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card
timeout 100 /tmp/bin/harness_exec_tests --gtest_filter='*CoResident*:*LastBlock*' > "$OUT/exec-tests.log" 2>&1
echo "== exec tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|SKIPPED  \]" "$OUT/exec-tests.log" | head
timeout 200 /tmp/bin/kernels_tests --gtest_filter='*Fused*cuda*:GpuAgainstHost.*:PrefillFused*' > "$OUT/tests.log" 2>&1
echo "== tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/tests.log" | head
ab_benches
replays_and_comparison
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *replay*.json) && rm -f "$OUT"/*.log "$OUT"/*replay*.json
