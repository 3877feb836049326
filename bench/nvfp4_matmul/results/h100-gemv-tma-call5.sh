#!/usr/bin/env bash
# Committed 2026-12-05 (session from 18:27 UTC) as run: call 5 of that session, on an H100 (results/h100-gemv-tma-final-*.json;
# PERF.md, "Issue 16 item 7: the sliced GEMV fed by the TMA"). build/carry2/bin.tgz held the cuda-sm90 build of the committed tree.
# Device call 5 of the session from 18:27 UTC (2026-12-05): the bench's TMA GEMV as committed
# (gemv_tma.cuh, with "1 ahead of A": one stage copied before A's slice is pre-paired, the rest
# after). GPU tests (bench_tests *Tma*: every variant the sliced kernel's bits), compute-sanitizer
# memcheck and racecheck on them, then bench --group tma twice (the whole group, then
# 5120 x 25600 alone).
set -uo pipefail
cd "$(dirname "$0")/../.."
B=/tmp/bin; mkdir -p $B && tar -xzf build/carry2/bin.tgz -C $B
L="$OUT"; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$B/bench_tests --gtest_filter='*Tma*' > $L/tests.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]" $L/tests.log
compute-sanitizer --tool memcheck --error-exitcode 9 $B/bench_tests --gtest_filter='*GemvTmaOnBackend*cuda*' > $L/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $L/memcheck.log | tail -2
compute-sanitizer --tool racecheck $B/bench_tests --gtest_filter='*GemvTmaOnBackend*cuda*' > $L/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $L/racecheck.log | tail -2
$B/nvfp4-harness bench --group tma --json $L/tma-all.json > $L/tma-all.log 2>&1; echo "bench all rc=$?"
$B/nvfp4-harness bench --group tma --only N5120_K25600 --json $L/tma-5120.json > $L/tma-5120.log 2>&1; echo "bench 5120 rc=$?"
python3 - $L/tma-all.json $L/tma-5120.json <<'PY'
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
bk={r["name"]:r["kernel_us"] for r in b["rows"]}
print("device", a["device"], "ceilings", round(a["copy_bytes_per_s"]/1e12,3), round(b["copy_bytes_per_s"]/1e12,3))
for r in a["rows"]:
    x=bk.get(r["name"])
    print("%-70s %7.2f %s" % (r["name"], r["kernel_us"], "%7.2f"%x if x else ""))
PY
