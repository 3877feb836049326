#!/usr/bin/env bash
# Committed 2026-12-05 (session from 16:00 UTC), device call 3: cl.tgz = build of branch experiment/cluster-multicast at 01b98c0 without the NVFP4_CLUSTER_NO_SHARE control (call 2 ran the same script on an earlier state: a cluster barrier every stage; h100-cluster-barrier-*). Output: h100-cluster-ab-*.json, h100-cluster-replay-*.json, h100-ncu-cluster-M256-*.csv.
# Session of 2026-12-05 from 16:00 UTC: prefill_fused_wgmma's two-tile kernel in clusters of two blocks along N
# sharing A by TMA multicast (branch experiment/cluster-multicast), against the same binary with
# NVFP4_NO_CLUSTER=1 (main's kernel): occupancy of clusters, tests, sanitizers, off/on/on/off, replay, ncu.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p /tmp/cl; tar -xzf build/carry2/cl.tgz -C /tmp/cl; W=/tmp/cl/bin
L="$OUT/logs"; mkdir -p "$L"
t0=$(date +%s); lap() { echo "##### $1 at $(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
build/carry2/occ
$W/kernels_tests --gtest_filter='*Fused*cuda*:GpuAgainstHost.*:PrefillFused*' > "$L/tests.log" 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|^\[  FAILED" "$L/tests.log"; grep -E "TilesPastTheGrid.*cuda|TwoTiles|TailSplit.*cuda" "$L/tests.log" | head
lap tests
shapes=(--shape 8192x5120 --shape 5120x6144 --shape 5120x18432 --shape 36864x5120 --shape 4096x4096 --shape 14336x4096 --shape 4096x14336)
for run in off-1 on-1 on-2 off-2; do
  case $run in off*) export NVFP4_NO_CLUSTER=1;; on*) unset NVFP4_NO_CLUSTER;; esac
  $W/nvfp4-harness bench --group msweep "${shapes[@]}" --m 128 --m 256 --m 512 --only "prefill_fused bias" --json "$L/m-$run.json" > "$L/m-$run.log" 2>&1
  echo "$run rc=$?"
done
unset NVFP4_NO_CLUSTER
python3 ci/device/bench-ab.py "$L/m-off-1.json,$L/m-off-2.json" "$L/m-on-1.json,$L/m-on-2.json" --only "prefill_fused bias"
lap ab
for run in off-natural on-natural off-prefill_vec8; do
  case $run in off*) export NVFP4_NO_CLUSTER=1;; on*) unset NVFP4_NO_CLUSTER;; esac
  $W/nvfp4-harness replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 --chunk 256 --route ${run#*-} --json "$L/replay-$run.json" > "$L/replay-$run.log" 2>&1
  python3 -c "
import json; d=json.load(open('$L/replay-$run.json')); print('replay $run', round(d['busy_us']/1000,1), [(n['name'], round(n['total_ms'],1), round(n.get('dequant_ms',0),1)) for n in d['node_types']])"
done
unset NVFP4_NO_CLUSTER
lap replay
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --print-limit 5 $W/kernels_tests \
    --gtest_filter='GpuAgainstHost.PrefillWgmmaTwoTiles*:Backends/FusedOnBackend.TilesPastTheGrid*/cuda' \
    > "$L/$tool.log" 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$L/$tool.log" | head -4
done
lap sanitizers
m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,launch__registers_per_thread
for s in barrier long_scoreboard wait gmma dispatch_stall short_scoreboard membar sleeping branch_resolving no_instruction lg_throttle mio_throttle; do m="$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done
for run in off on; do
  case $run in off*) export NVFP4_NO_CLUSTER=1;; on*) unset NVFP4_NO_CLUSTER;; esac
  timeout 100 ncu --clock-control none --kernel-name-base demangled --metrics "$m" -k 'regex:PrefillFusedWgmmaOf' --launch-skip 2 --launch-count 1 --csv --page raw \
    $W/nvfp4-harness bench --group msweep --shape 36864x5120 --m 256 --only "prefill_fused bias" --reps 100 --warmup 1 > "$L/ncu-$run.csv" 2>"$L/ncu-$run.err"
  echo "ncu $run rc=$?"
done
python3 ci/device/ncu-table.py "$L"/ncu-off.csv "$L"/ncu-on.csv
lap ncu
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
