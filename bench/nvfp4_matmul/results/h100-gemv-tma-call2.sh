#!/usr/bin/env bash
# Committed 2026-12-05 (session from 18:27 UTC) as run: call 2 of that session, on an H100 (results/h100-gemv-tma-*.json and
# h100-ncu-*gemv*; PERF.md, "Issue 16 item 7: the sliced GEMV fed by the TMA"). build/carry2/bin.tgz held the cuda-sm90 build of
# the tree then; see PERF.md for what each call's tree held.
# Device call 2 of the session from 18:27 UTC (2026-12-05): the same binaries as call 1
# (tma.sh). bench --group tma on 5120 x 25600 three more times (the run-to-run spread of
# the A/B), then Nsight Compute on one launch of the sliced kernel and of the TMA kernel
# (3 and 4 slots) at the plan's 9 slices, M = 1.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=/tmp/bin; mkdir -p $B && tar -xzf build/carry2/bin.tgz -C $B
L="$OUT"; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
for rep in 1 2 3; do
  $B/nvfp4-harness bench --group tma --only N5120_K25600 --json $L/tma-rep$rep.json > $L/tma-rep$rep.log 2>&1; echo "bench rep$rep rc=$?"
done
python3 - $L/tma-rep1.json $L/tma-rep2.json $L/tma-rep3.json <<'PY'
import json,sys
runs=[json.load(open(f)) for f in sys.argv[1:]]
print("copy ceilings", [round(d["copy_bytes_per_s"]/1e12,3) for d in runs])
for i,r in enumerate(runs[0]["rows"]):
    ks=[d["rows"][i]["kernel_us"] for d in runs]
    print("%-62s %s" % (r["name"], " ".join("%6.2f"%k for k in ks)))
PY
S="--section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis"
for v in "9 slices of 8 tiles (plan)" "tma 3 slots 9 slices" "tma 4 slots 9 slices"; do
  f=$L/ncu-$(echo $v | tr -c "a-z0-9\n" "_").log
  ncu --clock-control none --kernel-name-base demangled -k regex:'GemvMma(Slices|Tma)Of' --launch-skip 3 --launch-count 1 $S \
    $B/nvfp4-harness bench --group tma --only "$v M1_N5120_K25600" --reps 100 > $f 2>&1
  echo "== ncu $v rc=$?"; grep -E "^  [A-Za-z].*(GemvMma|\(.*\)x)|Duration|DRAM Throughput|Registers Per|Achieved Active Warps|Theoretical Active|Issue Slots Busy|No Eligible|Block Limit (Reg|Shared)|SM Frequency|Executed Instructions  |Stall|Warp Cycles Per Issued" $f | head -24
done
