#!/usr/bin/env bash
# Session of 2026-12-06 from 09:11 UTC, after fused-ab-call.sh among2: the slices added in the
# kernel, three binaries against main (base): v1 (the add of the slices a __noinline__ function
# after store_parts, four groups of outputs loaded at a time), v1b (the same, two groups) and off
# (v1's kernel, but the runner never launches it co-resident: the K split's second kernel as on
# main, so its rows say what the kernel's new code alone costs). Order base v1 v1b off off v1b v1
# base; prefill_fused with bias on the replay's four shapes and the sweep's three at M = 128 and
# 256; the 8K replay once each. Usage (device): bash <this>
set -uo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p /tmp/bin && tar -xzf build/carry2/bin.tgz -C /tmp/bin
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
case "$name" in *H200*) card=h200 ;; *H100*) card=h100 ;; *) card=gpu ;; esac
shapes=(--shape 8192x5120 --shape 5120x6144 --shape 5120x18432 --shape 36864x5120 --shape 4096x4096
  --shape 14336x4096 --shape 4096x14336)
bench() {  # bench WHICH RUN
  timeout 100 /tmp/bin/nvfp4-harness-$1 bench --group msweep "${shapes[@]}" --m 128 --m 256 \
    --only "prefill_fused bias M" --json "$OUT/$card-amongv-$1-$2.json" > "$OUT/bench-$1-$2.log" 2>&1
  echo "== bench $1 $2 rc=$?"
}
bench base 1; bench v1 1; bench v1b 1; bench off 1; bench off 2; bench v1b 2; bench v1 2; bench base 2
for w in base v1 v1b off; do
  timeout 60 /tmp/bin/nvfp4-harness-$w replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 \
    --chunk 256 --json "$OUT/$card-amongv-replay-$w.json" > "$OUT/replay-$w.log" 2>&1
  python3 -c "
import json; d=json.load(open('$OUT/$card-amongv-replay-$w.json')); print('replay $w', round(d['total']['total_ms'],1), [(n['name'], round(n['total_ms'],1)) for n in d['node_types']])"
done
for w in v1 v1b off; do
  echo "== $w against base"
  python3 ci/device/bench-ab.py "$OUT/$card-amongv-base-1.json,$OUT/$card-amongv-base-2.json" \
    "$OUT/$card-amongv-$w-1.json,$OUT/$card-amongv-$w-2.json"
done
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *replay*.json) && rm -f "$OUT"/*.log "$OUT"/*replay*.json
