#!/usr/bin/env bash
# Committed 2026-12-05 (session from 16:00 UTC): the first device call ran this (next-crossover.sh = h100-crossover-above384.sh). Output: h100-crossover-replay-{natural,prefill_vec8}.json.
# Session of 2026-12-05 from 06:55 UTC: the crossover re-check (next-crossover.sh) and, in the same call, the
# 8K replay with main's binary, natural and prefill_vec8 (item 6's ratio).
set -uo pipefail
cd "$(dirname "$0")/../.."
bash build/carry/next-crossover.sh
mv "$OUT/logs.tgz" "$OUT/crossover.tgz"
B=/tmp/bin/nvfp4-harness-base; L="$OUT/logs"; mkdir -p "$L"
for r in natural prefill_vec8; do
  $B replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 --chunk 256 --route $r --json "$L/replay-$r.json" > "$L/replay-$r.log" 2>&1
  python3 -c "
import json; d=json.load(open('$L/replay-$r.json')); print('replay $r', round(d['busy_us']/1000,1), [(n['name'], round(n['total_ms'],1), round(n.get('dequant_ms',0),1)) for n in d['node_types']])"
done
nvidia-smi --query-gpu=name --format=csv,noheader
tar -czf "$OUT/replay.tgz" -C "$OUT" logs && rm -rf "$L"
