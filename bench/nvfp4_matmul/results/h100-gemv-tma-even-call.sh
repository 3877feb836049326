#!/usr/bin/env bash
# Ran on an H100 80GB HBM3 (the call after 04:41 UTC, 2026-12-06) with gemv-tma-even-experiment.patch applied to the main of
# that session (bench_tests and nvfp4-harness of the cuda-sm90 preset, tarred into build/carry2/bin.tgz); PERF.md
# section "Issue 16 item 7: what the TMA GEMV's copy stream loses to, ...".
# Issue 16 item 7, branch experiment/gemv-tma-even (session of 2026-12-06 from 04:15 UTC): what stops the
# TMA GEMV's copy stream at 77-80 % of the copy ceiling (H100, the section of 01:10 UTC) where a flat
# read of the same bytes reaches 90 %? Two candidates, timed:
#  - the grid: on 4224 x 24576 (33 groups of 128 rows) 4 / 8 / 12 slices are exactly 1 / 2 / 3 blocks on
#    each of 132 SMs; its copies alone (the decoding warps wait for each slot and free it, no decode);
#  - the layout: every stage read as if the weights were prepacked tile-major (a stage's box 16 KB of
#    contiguous codes, 2 KB of scales) in place of 128 rows of 128 bytes, K / 2 apart: copies alone
#    and the whole kernel (bench_tests holds it to the sliced kernel's bits on prepacked weights);
# beside the route, the whole TMA kernel and the weights read alone, two runs; Nsight Compute on the
# copies alone, contract layout and tile-major.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=/tmp/bin; mkdir -p $B && tar -xzf build/carry2/bin.tgz -C $B
L="$OUT"; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
$B/bench_tests --gtest_filter='*GemvTma*:*GemvMmaTma*' 2>&1 | tail -3
ONLY=(--only M1_N4224_K24576 --only M8_N4224_K24576 --only M1_N5120_K25600 --only M8_N5120_K25600 --only "read alone")
for rep in 1 2; do
  $B/nvfp4-harness bench --group tma "${ONLY[@]}" --json $L/even-$rep.json > $L/even-$rep.log 2>&1
  echo "bench $rep rc=$?"
done
python3 - $L/even-1.json $L/even-2.json <<'PY'
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
bk={r["name"]:r for r in b["rows"]}
print("device", a["device"], "ceilings", round(a["copy_bytes_per_s"]/1e12,3), round(b["copy_bytes_per_s"]/1e12,3))
for r in a["rows"]:
    if "1 ahead" in r["name"]: continue
    o=bk.get(r["name"], {})
    print("%-66s %7.2f %7.2f" % (r["name"], r["kernel_us"], o.get("kernel_us",0)))
PY
S="--section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis"
for v in "tma copies alone 3 slots 9 slices M1_N5120_K25600" "tma tile-major copies alone 9 slices M1_N5120_K25600" "tma tile-major whole 9 slices M1_N5120_K25600"; do
  f=$L/ncu-$(echo $v | tr -c "a-zA-Z0-9\n" "_").log
  ncu --clock-control none --kernel-name-base demangled -k regex:'GemvMmaTmaOf' --launch-skip 3 --launch-count 1 $S \
    $B/nvfp4-harness bench --group tma --only "$v" --reps 100 > $f 2>&1
  echo "== ncu $v rc=$?"; grep -E "Duration|DRAM Throughput|SM Frequency|No Eligible|Achieved Active Warps|L2 Hit|Mem Busy|Max Bandwidth" $f | head -12
done
