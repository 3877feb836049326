#!/usr/bin/env bash
# Ran on an H100 80GB HBM3 (the call after 05:53 UTC, 2026-12-06) with gemv-tma-even-experiment.patch, then
# gemv-tma-slots-experiment.patch, applied to the main of that session; PERF.md, the section of 04:15 UTC.
# Issue 16 item 7, branch experiment/gemv-tma-slots (session of 2026-12-06 from 04:15 UTC): does a deeper
# ring hide more of the decode under the copies? The TMA GEMV with 3, 4, 5 and 6 slots (5: two blocks an
# SM; 6: one or two, by A's slice), whole and copies alone, with and without the slices' sum, 5120 x
# 25600 and 4224 x 24576, M = 1, two runs; the bits first (bench_tests, GPU and host).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=/tmp/bin; mkdir -p $B && tar -xzf build/carry2/bin.tgz -C $B
L="$OUT"; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
$B/bench_tests --gtest_filter='*GemvTma*:*GemvMmaTma*' 2>&1 | tail -3
ONLY=(--only M1_N4224_K24576 --only M1_N5120_K25600 --only "read alone M1_N5120" --only "read alone M1_N4224")
for rep in 1 2; do
  $B/nvfp4-harness bench --group tma "${ONLY[@]}" --json $L/slots-$rep.json > $L/slots-$rep.log 2>&1
  echo "bench $rep rc=$?"
done
python3 - $L/slots-1.json $L/slots-2.json <<'PY'
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
bk={r["name"]:r for r in b["rows"]}
print("device", a["device"], "ceilings", round(a["copy_bytes_per_s"]/1e12,3), round(b["copy_bytes_per_s"]/1e12,3))
for r in a["rows"]:
    n=r["name"]
    if "1 ahead" in n or "tile-major" in n: continue
    print("%-66s %7.2f %7.2f %5.1f" % (n, r["kernel_us"], bk[n]["kernel_us"], 100*r["bytes"]/(r["kernel_us"]*1e-6)/a["copy_bytes_per_s"]))
PY
