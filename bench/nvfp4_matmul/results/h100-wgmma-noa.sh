#!/usr/bin/env bash
# Committed 2026-12-05 (session from 16:00 UTC), device call 8: cc.tgz = build of branch experiment/wgmma-copy-compute 0e9ea9e. Output: h100-wgmma-noa-*.json, h100-ncu-wgmma-noa-M256-*.csv.
# Session of 2026-12-05 from 16:00 UTC, call 8: prefill_fused_wgmma without A's copies (NVFP4_TIMING=noa: W's and the scales' kept, A's slots left as they are), against
# the whole kernel and its compute alone, one binary
# (branch experiment/wgmma-copy-compute): is what the copies cost inside the SM A's share (then noa ~ compute
# alone) or W's and the scales' (noa ~ whole)?
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p /tmp/cc; tar -xzf build/carry2/cc.tgz -C /tmp/cc; W=/tmp/cc/bin
L="$OUT/logs"; mkdir -p "$L"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
shapes=(--shape 8192x5120 --shape 5120x6144 --shape 5120x18432 --shape 36864x5120 --shape 4096x4096 --shape 14336x4096 --shape 4096x14336)
for run in whole-1 noa-1 compute-1 compute-2 noa-2 whole-2; do
  unset NVFP4_TIMING; case $run in noa*) export NVFP4_TIMING=noa;; compute*) export NVFP4_TIMING=compute;; esac
  $W/nvfp4-harness bench --group msweep "${shapes[@]}" --m 128 --m 256 --only "prefill_fused bias" --json "$L/n-$run.json" > "$L/n-$run.log" 2>&1
  echo "$run rc=$?"
done
unset NVFP4_TIMING
echo "== whole -> noa"; python3 ci/device/bench-ab.py "$L/n-whole-1.json,$L/n-whole-2.json" "$L/n-noa-1.json,$L/n-noa-2.json" --only "prefill_fused bias"
echo "== whole -> compute alone"; python3 ci/device/bench-ab.py "$L/n-whole-1.json,$L/n-whole-2.json" "$L/n-compute-1.json,$L/n-compute-2.json" --only "prefill_fused bias"
m=gpu__time_duration.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum.per_second,sm__cycles_elapsed.avg.per_second
for s in barrier long_scoreboard wait gmma dispatch_stall short_scoreboard math_pipe_throttle mio_throttle lg_throttle no_instruction sleeping branch_resolving; do m="$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done
for run in whole noa compute; do
  unset NVFP4_TIMING; case $run in noa*) export NVFP4_TIMING=noa;; compute*) export NVFP4_TIMING=compute;; esac
  timeout 100 ncu --clock-control none --kernel-name-base demangled --metrics "$m" -k 'regex:PrefillFusedWgmmaOf' --launch-skip 2 --launch-count 1 --csv --page raw \
    $W/nvfp4-harness bench --group msweep --shape 36864x5120 --m 256 --only "prefill_fused bias" --reps 100 --warmup 1 > "$L/ncu-$run.csv" 2>"$L/ncu-$run.err"
  echo "ncu $run rc=$?"
done
unset NVFP4_TIMING
python3 ci/device/ncu-table.py "$L"/ncu-whole.csv "$L"/ncu-noa.csv "$L"/ncu-compute.csv | grep -v -E "\.(min|max)[.]|\.(min|max) |\.avg "
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
