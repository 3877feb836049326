#!/usr/bin/env bash
# Ran from build/carry2 (carried binaries: base.tgz = main's nvfp4-harness-base, ws.tgz = the branch's build).
# Session of 2026-12-05 from 10:40 UTC: prefill_fused_wgmma warp-specialized with the TMA (branch
# experiment/ws-tma-halves): a producer warpgroup (one warp issues every copy: W and A by the TMA, the
# scales by cp.async), two consumer warpgroups, A's slots 64-k halves freed as each wgmma group retires.
# Against main ("base", nvfp4-harness-base): tests, sanitizers, base/ws/ws/base, replay (and vec8's).
# Its tables are printed by ci/device/bench-ab.py and ci/device/ncu-table.py since the call: it ran the same
# arithmetic inline; from the committed h100-ws-ab-*.json and the call's CSVs they give the same figures.
set -uo pipefail
cd "$(dirname "$0")/../.."
tar -xzf build/carry2/base.tgz -C /tmp; mkdir -p /tmp/ws; tar -xzf build/carry2/ws.tgz -C /tmp/ws
B=/tmp/bin/nvfp4-harness-base; W=/tmp/ws/bin
L="$OUT/logs"; mkdir -p "$L"
t0=$(date +%s); lap() { echo "##### $1 at $(( $(date +%s) - t0 )) s"; }
shapes=(--shape 8192x5120 --shape 5120x6144 --shape 5120x18432 --shape 36864x5120 --shape 4096x4096 --shape 14336x4096 --shape 4096x14336)
runs=(base-1 ws-1 ws-2 base-2)
for run in "${runs[@]}"; do
  case $run in base*) bin=$B;; ws*) bin=$W/nvfp4-harness;; esac
  $bin bench --group msweep "${shapes[@]}" --m 128 --m 256 --only "prefill_fused bias" --json "$L/m-$run.json" > "$L/m-$run.log" 2>&1
  echo "$run rc=$?"
done
python3 ci/device/bench-ab.py "$L/m-base-1.json,$L/m-base-2.json" "$L/m-ws-1.json,$L/m-ws-2.json" --only "prefill_fused bias"
lap ab
for run in base-natural ws-natural base-prefill_vec8; do
  bin=$W/nvfp4-harness; [[ $run == base* ]] && bin=$B
  $bin replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 --chunk 256 --route ${run#*-} --json "$L/replay-$run.json" > "$L/replay-$run.log" 2>&1
  python3 -c "
import json; d=json.load(open('$L/replay-$run.json')); print('replay $run', round(d['busy_us']/1000,1), [(n['name'], round(n['total_ms'],1), round(n.get('dequant_ms',0),1)) for n in d['node_types']])"
done
lap replay
$W/kernels_tests --gtest_filter='*Fused*cuda*:GpuAgainstHost.*:PrefillFused*' > "$L/tests.log" 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|^\[  FAILED" "$L/tests.log"; grep -E "TilesPastTheGrid.*cuda|TwoTiles" "$L/tests.log"
lap tests
for tool in racecheck memcheck; do
  compute-sanitizer --tool $tool --print-limit 5 $W/kernels_tests \
    --gtest_filter='Backends/FusedOnBackend.TilesPastTheGrid*/cuda:Backends/FusedOnBackend.MatchesTheReferenceAtTileEdges/cuda' \
    > "$L/$tool.log" 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$L/$tool.log" | head -4
done
lap sanitizers
m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,launch__registers_per_thread
for s in barrier long_scoreboard wait gmma dispatch_stall short_scoreboard membar sleeping branch_resolving no_instruction lg_throttle mio_throttle; do m="$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done
for run in base ws; do
  bin=$W/nvfp4-harness; [[ $run == base ]] && bin=$B
  timeout 150 ncu --clock-control none --kernel-name-base demangled --metrics "$m" -k 'regex:PrefillFusedWgmmaOf' --launch-skip 2 --launch-count 1 --csv --page raw \
    $bin bench --group msweep --shape 36864x5120 --m 256 --only "prefill_fused bias" --reps 100 --warmup 1 > "$L/ncu-$run.csv" 2>"$L/ncu-$run.err"
  echo "ncu $run rc=$?"
done
python3 ci/device/ncu-table.py "$L"/ncu-*.csv
lap ncu
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
