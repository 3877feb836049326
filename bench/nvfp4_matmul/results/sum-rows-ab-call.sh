#!/usr/bin/env bash
# Session of 2026-12-06 from 07:17 UTC: prefill_fused_sum summing up to four rows a thread with every
# load issued first and the bias loaded before the stores (new) against main's sum (base, 3fbf410),
# A/B in one call: the fused GPU tests on the new kernels, then old / new / new / old bench runs of
# prefill_fused at M = 64..512 on the replay's four shapes and the sweep's three, with and without
# bias, plus gemv_mma on 5120 x 25600 (its sum keeps the slice-at-a-time loop), then the 8K replay,
# base / new / new / base. build/carry2/bin.tgz holds nvfp4-harness-base, nvfp4-harness-new and the
# new kernels_tests. Output: <card>-sum-rows-{base,new}-{1,2}.json, <card>-sum-rows-replay-*.json.
set -uo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p /tmp/bin && tar -xzf build/carry2/bin.tgz -C /tmp/bin
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
case "$name" in *H200*) card=h200 ;; *H100*) card=h100 ;; *) card=gpu ;; esac
timeout 200 /tmp/bin/kernels_tests --gtest_filter='*Fused*cuda*:GpuAgainstHost.*:PrefillFused*:*GemvSlices*cuda*' > "$OUT/tests.log" 2>&1
echo "== tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/tests.log" | head
shapes=(--shape 8192x5120 --shape 5120x6144 --shape 5120x18432 --shape 36864x5120 --shape 4096x4096
  --shape 14336x4096 --shape 4096x14336)
bench() {  # bench WHICH RUN
  timeout 140 /tmp/bin/nvfp4-harness-$1 bench --group msweep "${shapes[@]}" --m 64 --m 128 --m 256 --m 512 \
    --only "prefill_fused bias M" --only "prefill_fused M" --json "$OUT/$card-sum-rows-$1-$2.json" > "$OUT/bench-$1-$2.log" 2>&1
  echo "== bench $1 $2 rc=$?"
}
bench base 1; bench new 1; bench new 2; bench base 2
for w in base new; do
  timeout 100 /tmp/bin/nvfp4-harness-$w bench --group decode --only "gemv_mma M" --json "$OUT/$card-sum-rows-gemv-$w.json" > "$OUT/gemv-$w.log" 2>&1
  echo "== gemv $w rc=$?"
done
replay() {  # replay WHICH RUN
  timeout 60 /tmp/bin/nvfp4-harness-$1 replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 \
    --chunk 256 --json "$OUT/$card-sum-rows-replay-$1-$2.json" > "$OUT/replay-$1-$2.log" 2>&1
  python3 -c "
import json; d=json.load(open('$OUT/$card-sum-rows-replay-$1-$2.json')); print('replay $1 $2', round(d['total']['total_ms'],1), [(n['name'], round(n['total_ms'],1)) for n in d['node_types']])"
}
replay base 1; replay new 1; replay new 2; replay base 2
timeout 60 /tmp/bin/nvfp4-harness-base replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 \
  --chunk 256 --route prefill_vec8 --json "$OUT/$card-sum-rows-replay-vec8.json" > "$OUT/replay-vec8.log" 2>&1
python3 -c "
import json; d=json.load(open('$OUT/$card-sum-rows-replay-vec8.json')); print('replay prefill_vec8', round(d['total']['total_ms'],1))"
python3 ci/device/bench-ab.py "$OUT/$card-sum-rows-base-1.json,$OUT/$card-sum-rows-base-2.json" \
  "$OUT/$card-sum-rows-new-1.json,$OUT/$card-sum-rows-new-2.json"
python3 ci/device/bench-ab.py "$OUT/$card-sum-rows-gemv-base.json" "$OUT/$card-sum-rows-gemv-new.json"
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log) && rm -f "$OUT"/*.log
