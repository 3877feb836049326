#!/usr/bin/env bash
# Timing-only variants of prefill_fused against its whole kernel, one binary (build/carry2/cc.tgz: a build of branch
# experiment/wgmma-copy-compute, main's kernels unless NVFP4_TIMING names a variant; wrong results by design):
#   copies   the stages' copies and waits alone (no decode, no MMA)
#   compute  the decode and MMAs alone (no copies, no waits on them)
#   nowait   copies issued as the kernel does, no stage waiting for them but the last two (wgmma kernel only)
#   noa      the wgmma kernel without A's copies (W's and the scales' kept)
# Usage: h100-timing-variants.sh VARIANT...   (each timed beside the whole kernel: whole, v..., v... reversed, whole)
# Environment: MS (the bench's M values), SHAPES (N x K), NCU_SHAPE and NCU_M (the one profiled launch), NCU_KERNEL
# (its ncu name regex). Writes $OUT/logs.tgz: t-<run>.json per bench run, t-alone.json (cuBLAS alone and the flat
# read of the weights, same call), ncu-<variant>.csv.
#
# The session of 2026-12-05 from 16:00 UTC ran it (as four copies of this script, one a call; the runs' JSON and
# CSV are committed under these names):
#   call 5 (branch 90fd99c):  h100-timing-variants.sh copies compute
#                             -> h100-wgmma-split-*.json (t-alone as h100-wgmma-split-cublas.json), h100-ncu-wgmma-split-M256-*.csv
#   call 6 (54d2b8c):         MS="16 32 64" SHAPES="4096x4096 14336x4096 4096x14336" NCU_SHAPE=14336x4096 NCU_M=64 \
#                             NCU_KERNEL='PrefillFused<' h100-timing-variants.sh copies compute
#                             -> h100-fused-split-*.json (t-alone as h100-fused-split-alone.json), h100-ncu-fused-split-M64-*.csv
#   call 7 (45056e3):         h100-timing-variants.sh nowait compute -> h100-wgmma-nowait-*.json, h100-ncu-wgmma-nowait-M256-*.csv
#   call 8 (0e9ea9e):         h100-timing-variants.sh noa compute    -> h100-wgmma-noa-*.json, h100-ncu-wgmma-noa-M256-*.csv
# Each call's ncu metric list was a subset of the one below; call 5 timed cuBLAS alone (--only cuBLAS) where t-alone
# now also times the flat read; calls 7 and 8 ran no t-alone.
set -uo pipefail
(($#)) || { sed -n '2,11p' "$0"; exit 2; }
cd "$(dirname "$0")/../../.."
MS=${MS:-128 256}
SHAPES=${SHAPES:-8192x5120 5120x6144 5120x18432 36864x5120 4096x4096 14336x4096 4096x14336}
NCU_SHAPE=${NCU_SHAPE:-36864x5120} NCU_M=${NCU_M:-256} NCU_KERNEL=${NCU_KERNEL:-PrefillFusedWgmmaOf}
mkdir -p /tmp/cc; tar -xzf build/carry2/cc.tgz -C /tmp/cc; W=/tmp/cc/bin
L="$OUT/logs"; mkdir -p "$L"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bench=("$W/nvfp4-harness" bench --group msweep)
for s in $SHAPES; do bench+=(--shape "$s"); done
for m in $MS; do bench+=(--m "$m"); done
# The variant a run name stands for ("whole" is main's kernel).
timing() { unset NVFP4_TIMING; [[ ${1%-*} == whole ]] || export NVFP4_TIMING=${1%-*}; }

reversed=(); for v in "$@"; do reversed=("$v" "${reversed[@]}"); done
for run in whole-1 "${@/%/-1}" "${reversed[@]/%/-2}" whole-2; do
  timing "$run"
  "${bench[@]}" --only "prefill_fused bias" --json "$L/t-$run.json" > "$L/t-$run.log" 2>&1
  echo "$run rc=$?"
done
unset NVFP4_TIMING
"${bench[@]}" --only "alone" --json "$L/t-alone.json" > "$L/t-alone.log" 2>&1
echo "alone rc=$?"
for v in "$@"; do
  echo "== whole -> $v"
  python3 ci/device/bench-ab.py "$L/t-whole-1.json,$L/t-whole-2.json" "$L/t-$v-1.json,$L/t-$v-2.json" --only "prefill_fused bias"
done
python3 -c "
import json
for r in json.load(open('$L/t-alone.json'))['rows']: print(r['name'], round(r['kernel_us'], 2))"

m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed
m=$m,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
m=$m,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed
m=$m,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum.per_second
m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed
for s in barrier long_scoreboard wait gmma dispatch_stall short_scoreboard math_pipe_throttle not_selected selected \
         mio_throttle lg_throttle no_instruction sleeping branch_resolving; do
  m="$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"
done
csvs=()
for run in whole "$@"; do
  timing "$run"
  timeout 100 ncu --clock-control none --kernel-name-base demangled --metrics "$m" -k "regex:$NCU_KERNEL" \
    --launch-skip 2 --launch-count 1 --csv --page raw \
    "$W/nvfp4-harness" bench --group msweep --shape "$NCU_SHAPE" --m "$NCU_M" --only "prefill_fused bias" --reps 100 \
    --warmup 1 > "$L/ncu-$run.csv" 2>"$L/ncu-$run.err"
  echo "ncu $run rc=$?"
  csvs+=("$L/ncu-$run.csv")
done
unset NVFP4_TIMING
python3 ci/device/ncu-table.py "${csvs[@]}" | grep -v -E "\.(min|max)[.]|\.(min|max) |\.avg "
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
