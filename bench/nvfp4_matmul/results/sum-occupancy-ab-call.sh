#!/usr/bin/env bash
# Session of 2026-12-06 from 07:17 UTC: prefill_fused_sum at 4 blocks an SM (main after a767868:
# 64 registers), 6 (40 registers, no spill) and 8 (32 registers, 24 bytes of spill), its launch
# bounds' kMinBlocksPerSM the only change, in one call: runs 4, 6, 8, 8, 6, 4 of prefill_fused at
# M = 128 and 256 on the replay's four shapes and the sweep's three, with and without bias, then
# the 8K replay twice each. build/carry2/bin.tgz holds nvfp4-harness-new (4) and -sum6, -sum8.
# Output: <card>-sum-occupancy-{4,6,8}-{1,2}.json, logs.tgz (replays).
set -uo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p /tmp/bin && tar -xzf build/carry2/bin.tgz -C /tmp/bin
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
case "$name" in *H200*) card=h200 ;; *H100*) card=h100 ;; *) card=gpu ;; esac
bin() { [ "$1" = 4 ] && echo /tmp/bin/nvfp4-harness-new || echo /tmp/bin/nvfp4-harness-sum$1; }
shapes=(--shape 8192x5120 --shape 5120x6144 --shape 5120x18432 --shape 36864x5120 --shape 4096x4096
  --shape 14336x4096 --shape 4096x14336)
bench() {  # bench BLOCKS RUN
  timeout 60 $(bin $1) bench --group msweep "${shapes[@]}" --m 128 --m 256 --only "prefill_fused bias M" \
    --only "prefill_fused M" --json "$OUT/$card-sum-occupancy-$1-$2.json" > "$OUT/bench-$1-$2.log" 2>&1
  echo "== bench $1 $2 rc=$?"
}
bench 4 1; bench 6 1; bench 8 1; bench 8 2; bench 6 2; bench 4 2
for b in 4 6 8 8 6 4; do
  timeout 30 $(bin $b) replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 --chunk 256 \
    --json "$OUT/$card-sum-occupancy-replay-$b.json" > "$OUT/replay-$b.log" 2>&1
  python3 -c "
import json; d=json.load(open('$OUT/$card-sum-occupancy-replay-$b.json')); print('replay $b', round(d['total']['total_ms'],1), [(n['name'], round(n['total_ms'],1)) for n in d['node_types']])"
done
for b in 6 8; do
  python3 ci/device/bench-ab.py "$OUT/$card-sum-occupancy-4-1.json,$OUT/$card-sum-occupancy-4-2.json" \
    "$OUT/$card-sum-occupancy-$b-1.json,$OUT/$card-sum-occupancy-$b-2.json"
done
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *replay*.json) && rm -f "$OUT"/*.log "$OUT"/*replay*.json
