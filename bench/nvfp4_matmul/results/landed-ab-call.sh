#!/usr/bin/env bash
# Session of 2026-12-06 from 07:17 UTC: the change as landed (prefill_fused_sum and gemv_scalar load
# the bias before their stores; prefill_fused's mma.sync epilogue and gemv_mma's left as they were,
# epilogue-bias-ab-call.sh having timed them slower) against main (base, 3fbf410), in one call: the
# fused and GEMV GPU tests on the new kernels, compute-sanitizer memcheck on them, old / new / new /
# old bench runs of prefill_fused at M = 9..256 on the replay's four shapes and the sweep's three,
# with and without bias, the decode group (its GEMV rows carry a bias) and the 8K replay.
# Output: <card>-landed-ab-{base,new}-{1,2}.json, <card>-landed-ab-decode-*.json, logs.tgz (replays).
set -uo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p /tmp/bin && tar -xzf build/carry2/bin.tgz -C /tmp/bin
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
case "$name" in *H200*) card=h200 ;; *H100*) card=h100 ;; *) card=gpu ;; esac
timeout 200 /tmp/bin/kernels_tests --gtest_filter='*Fused*cuda*:GpuAgainstHost.*:PrefillFused*:*GemvSlices*cuda*:*Gemv*cuda*:*Bias*cuda*' > "$OUT/tests.log" 2>&1
echo "== tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/tests.log" | head
timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bin/kernels_tests \
  --gtest_filter='*Fused*cuda*:*GemvSlices*cuda*:*GemvScalar*cuda*' > "$OUT/memcheck.log" 2>&1
echo "== memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " "$OUT/memcheck.log" | head
shapes=(--shape 8192x5120 --shape 5120x6144 --shape 5120x18432 --shape 36864x5120 --shape 4096x4096
  --shape 14336x4096 --shape 4096x14336)
bench() {  # bench WHICH RUN
  timeout 140 /tmp/bin/nvfp4-harness-$1 bench --group msweep "${shapes[@]}" --m 9 --m 16 --m 32 --m 64 --m 128 --m 256 \
    --only "prefill_fused bias M" --only "prefill_fused M" --json "$OUT/$card-landed-ab-$1-$2.json" > "$OUT/bench-$1-$2.log" 2>&1
  echo "== bench $1 $2 rc=$?"
}
bench base 1; bench new 1; bench new 2; bench base 2
for w in base new; do
  timeout 100 /tmp/bin/nvfp4-harness-$w bench --group decode --json "$OUT/$card-landed-ab-decode-$w.json" > "$OUT/gemv-$w.log" 2>&1
  echo "== gemv $w rc=$?"
done
replay() {  # replay WHICH RUN
  timeout 60 /tmp/bin/nvfp4-harness-$1 replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 \
    --chunk 256 --json "$OUT/$card-landed-ab-replay-$1-$2.json" > "$OUT/replay-$1-$2.log" 2>&1
  python3 -c "
import json; d=json.load(open('$OUT/$card-landed-ab-replay-$1-$2.json')); print('replay $1 $2', round(d['total']['total_ms'],1), [(n['name'], round(n['total_ms'],1)) for n in d['node_types']])"
}
replay base 1; replay new 1; replay new 2; replay base 2
timeout 60 /tmp/bin/nvfp4-harness-base replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 \
  --chunk 256 --route prefill_vec8 --json "$OUT/$card-landed-ab-replay-vec8.json" > "$OUT/replay-vec8.log" 2>&1
python3 -c "
import json; d=json.load(open('$OUT/$card-landed-ab-replay-vec8.json')); print('replay prefill_vec8', round(d['total']['total_ms'],1))"
python3 ci/device/bench-ab.py "$OUT/$card-landed-ab-base-1.json,$OUT/$card-landed-ab-base-2.json" \
  "$OUT/$card-landed-ab-new-1.json,$OUT/$card-landed-ab-new-2.json"
python3 ci/device/bench-ab.py "$OUT/$card-landed-ab-decode-base.json" "$OUT/$card-landed-ab-decode-new.json"
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *replay*.json) && rm -f "$OUT"/*.log "$OUT"/*replay*.json
