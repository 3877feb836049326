#!/usr/bin/env bash
# Session of 2026-12-06 from 18:06 UTC, its last device minutes: the 8K replay (chunks of 256) base
# (main at 64e7bff) / new (4c69ef9) / new / base, with the SM clock, power and temperature while
# each runs (ab_clocks), and on prefill_vec8: item 6 on whatever card comes, and whether the new
# binary's unchanged nodes read slower because the card ran slower (head-round-call.sh's
# question). Then, on an H200 only, the targets bench (items 5 and 7) in TARGETS_S seconds.
# Usage (device): bash bench/nvfp4_matmul/results/head-replay-clocks-call.sh TAG
set -uo pipefail
tag="${1:-replayclocks}"
cd "$(dirname "$0")/../../.."
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card
ab_clocks=1 ab_replays
if [ "$card" = h200 ]; then
  timeout "${TARGETS_S:-240}" /tmp/bin/nvfp4-harness-new bench --json "$OUT/$card-$tag-targets-bench.json" \
    > "$OUT/targets-bench.log" 2>&1
  echo "== targets bench rc=$?"
fi
(cd "$OUT" && tar -czf logs.tgz *.log clocks-*.csv *replay*.json && rm -f *.log clocks-*.csv *replay*.json)
