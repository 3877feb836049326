#!/usr/bin/env bash
# Session of 2026-12-05 from 06:55 UTC: why the barrier-free ring (new) lost to main (base) at two tiles:
# Nsight Compute on 36864x5120 M=256 and 14336x4096 M=256, one launch each, the metrics of
# results/h200-ncu-wgmma-vs-cublas-36864x5120-M256.txt.
# Its table is printed by ci/device/ncu-table.py since the call, which ran the same printer inline.
set -uo pipefail
cd "$(dirname "$0")/../.."
tar -xzf build/carry/bin.tgz -C /tmp
B=/tmp/bin; L="$OUT/logs"; mkdir -p "$L"
m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,launch__registers_per_thread
for s in smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio smsp__average_warps_issue_stalled_wait_per_issue_active.ratio smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio smsp__average_warps_issue_stalled_membar_per_issue_active.ratio smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio; do m="$m,$s"; done
for shape in 36864x5120 14336x4096; do
for run in base new; do
  bin=$B/nvfp4-harness; [[ $run == base ]] && bin=$B/nvfp4-harness-base
  timeout 150 ncu --clock-control none --kernel-name-base demangled --metrics "$m" -k 'regex:PrefillFusedWgmmaOf' --launch-skip 2 --launch-count 1 --csv --page raw \
    $bin bench --group msweep --shape $shape --m 256 --only "prefill_fused bias" --reps 100 --warmup 1 > "$L/ncu-$shape-$run.csv" 2>"$L/ncu-$shape-$run.err"
  echo "ncu $shape $run rc=$?"
done
done
python3 ci/device/ncu-table.py "$L"/ncu-*.csv
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
