#!/usr/bin/env bash
# Committed 2026-12-05 (session from 18:27 UTC) as run: call 3 of that session, on an H100 (results/h100-gemv-tma-*.json and
# h100-ncu-*gemv*; PERF.md, "Issue 16 item 7: the sliced GEMV fed by the TMA"). build/carry2/bin.tgz held the cuda-sm90 build of
# the tree then; see PERF.md for what each call's tree held.
# Device call 3 of the session from 18:27 UTC (2026-12-05): the binaries of call 1. Nsight
# Compute's source counters (stall samples per SASS instruction) on one launch of the TMA
# kernel (3 slots, 9 slices) and of the sliced kernel (the plan's 9 slices), 5120 x 25600, M = 1.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=/tmp/bin; mkdir -p $B && tar -xzf build/carry2/bin.tgz -C $B
L="$OUT"; mkdir -p "$L"
nvidia-smi --query-gpu=name --format=csv,noheader
for v in "tma 3 slots 9 slices" "9 slices of 8 tiles (plan)"; do
  n=$(echo $v | tr -c "a-z0-9\n" "_")
  ncu --clock-control none --kernel-name-base demangled -k regex:'GemvMma(Slices|Tma)Of' --launch-skip 3 --launch-count 1 \
    --section WarpStateStats --section SourceCounters --import-source no -o $L/src-$n \
    $B/nvfp4-harness bench --group tma --only "$v M1_N5120_K25600" --reps 100 > $L/ncu-src-$n.log 2>&1
  echo "== $v rc=$?"
  ncu -i $L/src-$n.ncu-rep --page source --csv --print-source sass > $L/src-$n.csv 2>$L/src-$n.err
  echo "csv rc=$? lines $(wc -l < $L/src-$n.csv)"
  python3 - $L/src-$n.csv <<'PY'
import csv,sys
rows=list(csv.reader(open(sys.argv[1])))
h=rows[0]; print(h[:40])
PY
  gzip -f $L/src-$n.csv
done
