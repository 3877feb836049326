#!/usr/bin/env bash
# Session of 2026-12-07 from 01:37 UTC: w256n128's K split balanced over all 132 blocks (a stream-K
# split, FusedPlan::balanced_blocks, each block's run through the ring without a break between
# tiles; o_proj's and down_proj's k3 at M = 256 became k5-balanced132)
# against main's head, on whatever card comes: the fused GPU tests (the balanced split's among
# them); the 8K replay base / new / new / base and on prefill_vec8; the rows at M = 256 of the
# replay's shapes, the sweep's three and two whose plans give each block what a balanced split
# would (streamk-proxy-call.sh), base / new / new / base; the balanced split's GPU test under
# compute-sanitizer. build/carry5/bin.tgz: nvfp4-harness-base (main at 93a69ae),
# nvfp4-harness-new and kernels_tests (the balanced split: main at 93a69ae with
# results/balanced-split-experiment.patch applied, `bash ci/build.sh cuda-sm90 nvfp4-harness
# kernels_tests`). Run on an H100 in the session from 04:07 UTC as two inline calls
# with its parts (tests, replays, sanitizers; then the rows at M = 256): PERF.md, 2026-12-07.
# Usage (device): bash bench/nvfp4_matmul/results/balanced-ab-call.sh TAG
set -uo pipefail
tag="${1:-balanced}"
cd "$(dirname "$0")/../../.."
ab_bins=build/carry5/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card
ab_tests_then_replays 150
# The rows only where the call has time left for them (BALANCED_ROWS_BEFORE_S, 200 by default).
if [ $((SECONDS - t0)) -lt "${BALANCED_ROWS_BEFORE_S:-200}" ]; then
  ab_shapes+=(--shape 5120x16896 --shape 5120x5760)
  ab_ms=(--m 256)
  ab_benches
  ab_compare
  echo "== $((SECONDS - t0)) s"
fi
# BALANCED_SANITIZERS=0: not this call (little device time left).
[ "${BALANCED_SANITIZERS:-1}" = 1 ] && ab_sanitizers 60 '*ABalancedSplit*cuda*' balanced
(cd "$OUT" && tar -czf logs.tgz *.log *replay*.json && rm -f *.log *replay*.json)
(cd "$OUT" && ls $card-$tag-base-*.json > /dev/null 2>&1 && tar -czf ab.tgz $card-$tag-base-*.json \
  $card-$tag-new-*.json && rm -f $card-$tag-base-*.json $card-$tag-new-*.json)
