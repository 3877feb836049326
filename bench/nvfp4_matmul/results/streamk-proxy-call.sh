#!/usr/bin/env bash
# Session of 2026-12-07 from 01:37 UTC: what balancing the K split's blocks over all 132 SMs could
# gain at most (stream-K's bound, before writing it), timed on shapes whose plans already give
# each block the steps a balanced split would: 5120 x 18432 (k3, 48 steps a block; 40 tiles x 144
# steps over 132 blocks would be 43.6) against 5120 x 16896 (k3, 44 steps); 5120 x 6144 (16)
# against 5120 x 5760 (15; balanced 14.5); 36864 x 5120 (two rounds and a tail split, 80 + 10
# steps; balanced 87.3) against 33792 x 5632 (two whole rounds of 44 steps = 88). M = 256, the
# natural route, bias on, main's head binary (build/carry4/bin.tgz: nvfp4-harness-new built at
# 93a69ae). Not run as such: its rows at M = 256 were timed in the balanced split's
# second call (session from 04:07 UTC; PERF.md, 2026-12-07).
# Usage (device): bash bench/nvfp4_matmul/results/streamk-proxy-call.sh TAG
set -uo pipefail
tag="${1:-proxy}"
cd "$(dirname "$0")/../../.."
ab_bins=build/carry4/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card
ab_shapes=(--shape 5120x18432 --shape 5120x16896 --shape 5120x6144 --shape 5120x5760 --shape 36864x5120
  --shape 33792x5632 --shape 8192x5120)
ab_ms=(--m 256)
ab_only=(--only "prefill_fused bias M256")
ab_bench new 1
ab_bench new 2
# Each row's two runs side by side (bench-ab.py's old / new columns are runs 1 and 2).
python3 ci/device/bench-ab.py "$OUT/$card-$tag-new-1.json" "$OUT/$card-$tag-new-2.json"
