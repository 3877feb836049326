#!/usr/bin/env bash
# Committed 2026-12-05 (session from 16:00 UTC), device call 6: cc.tgz = build of branch experiment/wgmma-copy-compute 54d2b8c. Output: h100-fused-split-*.json, h100-ncu-fused-split-M64-*.csv.
# Session of 2026-12-05 from 16:00 UTC, call 6: what bounds prefill_fused at M = 16, 32, 64 (the mma.sync shapes
# m16n64 / m32n128 / m64n128 with their K slices; M = 9 takes the GEMV-shaped path, not split here). One binary
# (branch experiment/wgmma-copy-compute, main's kernels by default): the whole kernel, its copies alone
# (NVFP4_TIMING=copies), its decode and mmas alone (NVFP4_TIMING=compute); the weight bytes read alone and cuBLAS
# in the same call.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p /tmp/cc; tar -xzf build/carry2/cc.tgz -C /tmp/cc; W=/tmp/cc/bin
L="$OUT/logs"; mkdir -p "$L"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
shapes=(--shape 4096x4096 --shape 14336x4096 --shape 4096x14336)
for run in whole-1 copies-1 compute-1 compute-2 copies-2 whole-2; do
  unset NVFP4_TIMING; case $run in copies*) export NVFP4_TIMING=copies;; compute*) export NVFP4_TIMING=compute;; esac
  $W/nvfp4-harness bench --group msweep "${shapes[@]}" --m 16 --m 32 --m 64 --only "prefill_fused bias" --json "$L/s-$run.json" > "$L/s-$run.log" 2>&1
  echo "$run rc=$?"
done
unset NVFP4_TIMING
$W/nvfp4-harness bench --group msweep "${shapes[@]}" --m 16 --m 32 --m 64 --only "alone" --json "$L/s-alone.json" > "$L/s-alone.log" 2>&1
echo "alone rc=$?"
echo "== whole -> copies alone"; python3 ci/device/bench-ab.py "$L/s-whole-1.json,$L/s-whole-2.json" "$L/s-copies-1.json,$L/s-copies-2.json" --only "prefill_fused bias"
echo "== whole -> compute alone"; python3 ci/device/bench-ab.py "$L/s-whole-1.json,$L/s-whole-2.json" "$L/s-compute-1.json,$L/s-compute-2.json" --only "prefill_fused bias"
python3 -c "
import json
for r in json.load(open('$L/s-alone.json'))['rows']: print(r['name'], round(r['kernel_us'],2))"
m=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second
for s in barrier long_scoreboard wait math_pipe_throttle not_selected selected short_scoreboard mio_throttle lg_throttle no_instruction; do m="$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done
for run in whole copies compute; do
  unset NVFP4_TIMING; case $run in copies*) export NVFP4_TIMING=copies;; compute*) export NVFP4_TIMING=compute;; esac
  timeout 100 ncu --clock-control none --kernel-name-base demangled --metrics "$m" -k 'regex:PrefillFused<' --launch-skip 2 --launch-count 1 --csv --page raw \
    $W/nvfp4-harness bench --group msweep --shape 14336x4096 --m 64 --only "prefill_fused bias" --reps 100 --warmup 1 > "$L/ncu-$run.csv" 2>"$L/ncu-$run.err"
  echo "ncu $run rc=$?"
done
unset NVFP4_TIMING
python3 ci/device/ncu-table.py "$L"/ncu-whole.csv "$L"/ncu-copies.csv "$L"/ncu-compute.csv | grep -v -E "\.(min|max)[.]|\.(min|max) "
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
