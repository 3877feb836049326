#!/usr/bin/env bash
# Session of 2026-12-06 from 15:48 UTC, the last device minutes: on an H200 only (elsewhere nothing),
# item 6's replay, base (main at 64e7bff) / new / new / base and on prefill_vec8, the 8K prompt in
# chunks of 256 (ab-replays.sh). build/carry2/bin.tgz holds nvfp4-harness-base and nvfp4-harness-new.
# Usage (device): bash bench/nvfp4_matmul/results/h200-replay-call.sh TAG
set -uo pipefail
tag="${1:-replay}"
cd "$(dirname "$0")/../../.."
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
[[ "$name" == *H200* ]] || { echo "not an H200: nothing run"; exit 0; }
card=h200
mkdir -p /tmp/bin && tar -xzf build/carry2/bin.tgz -C /tmp/bin
source bench/nvfp4_matmul/results/ab-replays.sh
replay base 1; replay new 1; replay new 2; replay base 2
timeout 60 /tmp/bin/nvfp4-harness-new replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 \
  --chunk 256 --route prefill_vec8 --json "$OUT/$card-$tag-replay-vec8.json" > "$OUT/replay-vec8.log" 2>&1
python3 -c "
import json; d=json.load(open('$OUT/$card-$tag-replay-vec8.json')); print('replay prefill_vec8', round(d['total']['total_ms'],1))"
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.json) && rm -f "$OUT"/*.log "$OUT"/*.json
