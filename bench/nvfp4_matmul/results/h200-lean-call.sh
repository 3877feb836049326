#!/usr/bin/env bash
# Session of 2026-12-06 from 20:47 UTC: main's head on an H200 in the little device time the
# session's failed starts left (none came: 13 starts failed). Item 6 first: the fused GPU tests
# (ab_fused_tests), the 8K replay base (64e7bff) / new (the head's binary) / new / base with the
# card's clocks (ab_clocks), and on prefill_vec8; then item 5's rows alone (the fused call with
# bias, cuBLAS BF16 alone, the weights read alone; the msweep's M values and shapes) in LEAN_S
# seconds (0: none). Item 7's kernels did not change since the H200's last round. On any other
# card it runs nothing past the tests.
# Usage (device): bash bench/nvfp4_matmul/results/h200-lean-call.sh TAG
set -uo pipefail
tag="${1:-lean}"
cd "$(dirname "$0")/../../.."
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card
t0=$SECONDS
ab_fused_tests 60
if [ "$card" = h200 ]; then
  ab_clocks=1 ab_replays
  echo "== $((SECONDS - t0)) s"
fi
if [ "$card" = h200 ] && [ "${LEAN_S:-150}" -gt 0 ]; then  # LEAN_S=0: the replays alone
  timeout "${LEAN_S:-150}" /tmp/bin/nvfp4-harness-new bench --group msweep --only "prefill_fused bias M" \
    --only "cuBLAS BF16 GEMM alone" --only "weight bytes read alone" \
    --json "$OUT/$card-$tag-item5-bench.json" > "$OUT/item5-bench.log" 2>&1
  echo "== item 5 bench rc=$? $((SECONDS - t0)) s"
fi
(cd "$OUT" && tar -czf logs.tgz *.log clocks-*.csv *replay*.json 2>/dev/null; rm -f *.log clocks-*.csv *replay*.json)
