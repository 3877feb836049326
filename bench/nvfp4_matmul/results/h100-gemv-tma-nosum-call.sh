#!/usr/bin/env bash
# Ran on an H100 80GB HBM3 (the call after 04:44 UTC, 2026-12-06) with gemv-tma-even-experiment.patch applied to the main of
# that session (bench_tests and nvfp4-harness of the cuda-sm90 preset, tarred into build/carry2/bin.tgz); PERF.md
# section "Issue 16 item 7: what the TMA GEMV's copy stream loses to, ...".
# Issue 16 item 7, branch experiment/gemv-tma-even, the second call (session of 2026-12-06 from 04:15
# UTC): the first found the copies alone 2.3-3.6 us behind the weights read alone on both shapes (73.8
# and 58.5 MB), whatever the grid or the layout: a cost per call, not a rate? The TMA kernel (whole and
# copies alone, 3 and 4 slots) with and without the slices' sum kernel after it, M = 1, two runs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=/tmp/bin; mkdir -p $B && tar -xzf build/carry2/bin.tgz -C $B
L="$OUT"; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
ONLY=(--only M1_N4224_K24576 --only M1_N5120_K25600 --only "read alone M1_N5120" --only "read alone M1_N4224")
for rep in 1 2; do
  $B/nvfp4-harness bench --group tma "${ONLY[@]}" --json $L/nosum-$rep.json > $L/nosum-$rep.log 2>&1
  echo "bench $rep rc=$?"
done
python3 - $L/nosum-1.json $L/nosum-2.json <<'PY'
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
bk={r["name"]:r for r in b["rows"]}
print("device", a["device"], "ceilings", round(a["copy_bytes_per_s"]/1e12,3), round(b["copy_bytes_per_s"]/1e12,3))
for r in a["rows"]:
    if "1 ahead" in r["name"] or "tile-major" in r["name"]: continue
    o=bk.get(r["name"], {})
    print("%-66s %7.2f %7.2f %5.1f" % (r["name"], r["kernel_us"], o.get("kernel_us",0), 100*r["bytes"]/(r["kernel_us"]*1e-6)/a["copy_bytes_per_s"]))
PY
