#!/usr/bin/env bash
# Session of 2026-12-06 from 23:32 UTC: main's head after the session's changes (replay --dry-run
# with the H200's caps, h200_caps shared with the host executor; HostAccessLog) on whatever card
# comes: the fused GPU tests and GPU = host, verify on the GPU (the main job; 100 s at most), and
# replay --dry-run's plan beside the routes the natural replay takes on the card.
# build/carry4/bin.tgz holds nvfp4-harness-new and kernels_tests built at the head.
# Usage (device): bash bench/nvfp4_matmul/results/head-verify-call.sh TAG
set -uo pipefail
tag="${1:-verify}"
cd "$(dirname "$0")/../../.."
ab_bins=build/carry4/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card
t0=$SECONDS
ab_fused_tests 150
timeout 100 /tmp/bin/nvfp4-harness-new verify --backend cuda --out "$OUT/verify" > "$OUT/verify.log" 2>&1
echo "== verify rc=$? $((SECONDS - t0)) s"; tail -4 "$OUT/verify.log"
/tmp/bin/nvfp4-harness-new replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --dry-run | sed -n 3,4p
timeout 60 /tmp/bin/nvfp4-harness-new replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json \
  --json "$OUT/$card-$tag-replay.json" > "$OUT/replay.log" 2>&1
python3 -c "
import json; d=json.load(open('$OUT/$card-$tag-replay.json'))
print('replay natural', round(d['total']['total_ms'],1), 'ms; routes', {k: v['calls'] for k, v in d['routes'].items()})"
echo "== $((SECONDS - t0)) s"
(cd "$OUT" && tar -czf logs.tgz *.log verify/junit.xml *replay*.json 2>/dev/null && rm -rf *.log verify *replay*.json)
