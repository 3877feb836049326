#!/usr/bin/env bash
# Session of 2026-12-06 from 18:06 UTC: main's head (4c69ef9, the reread's mends after the last
# device call) against main at 64e7bff (before the tail's clusters of four) on whatever card comes,
# item 6 first: the fused GPU tests; the 8K replay base / new / new / base (with the SM clock and
# power while each runs) and on prefill_vec8
# (ab-replays.sh); the A/B rows; issue 16's targets bench on the head's binary (items 5 and 7; on
# an H100 too, whose numbers compare only with each other); the tail's tests under
# compute-sanitizer. build/carry2/bin.tgz holds nvfp4-harness-base, nvfp4-harness-new, kernels_tests.
# Usage (device): [HEAD_TARGETS=1] bash bench/nvfp4_matmul/results/head-round-call.sh TAG
set -uo pipefail
tag="${1:-head}"
cd "$(dirname "$0")/../../.."
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card
ab_clocks=1 ab_tests_then_replays 170
ab_benches
ab_compare
echo "== $((SECONDS - t0)) s"
# The targets bench on an H200, or where asked (HEAD_TARGETS=1: the session's first call, an H100's).
if [ "$card" = h200 ] || [ "${HEAD_TARGETS:-0}" = 1 ]; then
  timeout 300 /tmp/bin/nvfp4-harness-new bench --json "$OUT/$card-$tag-targets-bench.json" > "$OUT/targets-bench.log" 2>&1
  echo "== targets bench rc=$? $((SECONDS - t0)) s"
fi
ab_sanitizers 100
# At most 8 files come back: the logs and replays in one archive, the A/B rows in another.
(cd "$OUT" && tar -czf logs.tgz *.log *replay*.json clocks-*.csv && tar -czf ab.tgz $card-$tag-base-*.json $card-$tag-new-*.json \
  && rm -f *.log *replay*.json clocks-*.csv $card-$tag-base-*.json $card-$tag-new-*.json)
