#!/usr/bin/env bash
# Committed 2026-12-05 (session from 16:00 UTC), device call 5: cc.tgz = build of branch experiment/wgmma-copy-compute 90fd99c. Output: h100-wgmma-split-*.json, h100-ncu-wgmma-split-M256-*.csv.
# Session of 2026-12-05 from 16:00 UTC, call 4: what bounds prefill_fused_wgmma at M = 128 and 256. One binary
# (branch experiment/wgmma-copy-compute, main's kernel by default) times the whole kernel, its stages' copies and
# waits alone (NVFP4_TIMING=copies: no decode, no wgmma) and its decode and wgmmas alone (NVFP4_TIMING=compute:
# no copies, no waits on them), all on the route's plans; then cuBLAS alone in the same call.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p /tmp/cc; tar -xzf build/carry2/cc.tgz -C /tmp/cc; W=/tmp/cc/bin
L="$OUT/logs"; mkdir -p "$L"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
shapes=(--shape 8192x5120 --shape 5120x6144 --shape 5120x18432 --shape 36864x5120 --shape 4096x4096 --shape 14336x4096 --shape 4096x14336)
for run in whole-1 copies-1 compute-1 compute-2 copies-2 whole-2; do
  unset NVFP4_TIMING; case $run in copies*) export NVFP4_TIMING=copies;; compute*) export NVFP4_TIMING=compute;; esac
  $W/nvfp4-harness bench --group msweep "${shapes[@]}" --m 128 --m 256 --only "prefill_fused bias" --json "$L/m-$run.json" > "$L/m-$run.log" 2>&1
  echo "$run rc=$?"
done
unset NVFP4_TIMING
$W/nvfp4-harness bench --group msweep "${shapes[@]}" --m 128 --m 256 --only "cuBLAS" --json "$L/m-cublas.json" > "$L/m-cublas.log" 2>&1
echo "cublas rc=$?"
echo "== whole -> copies alone"; python3 ci/device/bench-ab.py "$L/m-whole-1.json,$L/m-whole-2.json" "$L/m-copies-1.json,$L/m-copies-2.json" --only "prefill_fused bias"
echo "== whole -> compute alone"; python3 ci/device/bench-ab.py "$L/m-whole-1.json,$L/m-whole-2.json" "$L/m-compute-1.json,$L/m-compute-2.json" --only "prefill_fused bias"
python3 - "$L" <<'PY'
import json,sys
L=sys.argv[1]
c={r['name'].split(' ',4)[-1]:r['kernel_us'] for r in json.load(open(f'{L}/m-cublas.json'))['rows']}
for k,v in sorted(c.items()): print('cublas', k, v)
PY
m=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum.per_second,sm__cycles_elapsed.avg.per_second
for run in whole copies compute; do
  unset NVFP4_TIMING; case $run in copies*) export NVFP4_TIMING=copies;; compute*) export NVFP4_TIMING=compute;; esac
  timeout 100 ncu --clock-control none --kernel-name-base demangled --metrics "$m" -k 'regex:PrefillFusedWgmmaOf' --launch-skip 2 --launch-count 1 --csv --page raw \
    $W/nvfp4-harness bench --group msweep --shape 36864x5120 --m 256 --only "prefill_fused bias" --reps 100 --warmup 1 > "$L/ncu-$run.csv" 2>"$L/ncu-$run.err"
  echo "ncu $run rc=$?"
done
unset NVFP4_TIMING
python3 ci/device/ncu-table.py "$L"/ncu-whole.csv "$L"/ncu-copies.csv "$L"/ncu-compute.csv | grep -v -E "\.(min|max)[.]|\.(min|max) "
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
