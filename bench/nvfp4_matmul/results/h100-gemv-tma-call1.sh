#!/usr/bin/env bash
# Committed 2026-12-05 (session from 18:27 UTC) as run: call 1 of that session, on an H100 (results/h100-gemv-tma-*.json and
# h100-ncu-*gemv*; PERF.md, "Issue 16 item 7: the sliced GEMV fed by the TMA"). build/carry2/bin.tgz held the cuda-sm90 build of
# the tree then; see PERF.md for what each call's tree held.
# Device call 1 of the session from 18:27 UTC (2026-12-05): the TMA-fed sliced GEMV
# (gemv_mma_tma.cuh). GPU tests (TMA = sliced kernel bit for bit; the route's GPU = host),
# compute-sanitizer memcheck and racecheck on the TMA tests, bench --group tma, Nsight
# Compute on one launch of each kernel at 5120 x 25600, M = 1.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=/tmp/bin; mkdir -p $B && tar -xzf build/carry2/bin.tgz -C $B
L="$OUT"; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
$B/kernels_tests --gtest_filter='*GemvTma*:*GemvMmaTma*:*GemvSlicesOnBackend*cuda*:GpuAgainstHost.GemvMma*' > $L/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" $L/tests.log
compute-sanitizer --tool memcheck --error-exitcode 9 $B/kernels_tests --gtest_filter='*GemvTmaOnBackend*cuda*' > $L/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $L/memcheck.log | tail -3
compute-sanitizer --tool racecheck $B/kernels_tests --gtest_filter='*GemvTmaOnBackend*cuda*' > $L/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $L/racecheck.log | tail -3
$B/nvfp4-harness bench --group tma --json $L/tma.json > $L/tma.log 2>&1; echo "bench rc=$?"
python3 - "$L/tma.json" <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
print("device", d.get("device"), "copy ceiling", d.get("copy_bytes_per_s"))
for r in d["rows"]:
    print("%-62s kernel %7.2f  %%copy %5.1f" % (r["name"], r["kernel_us"], 100*r["bytes"]/(r["kernel_us"]*1e-6)/d["copy_bytes_per_s"]))
PY
for k in GemvMmaTmaOf GemvMmaSlicesOf; do
  ncu --clock-control none -k regex:$k --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy --section SchedulerStats --section LaunchStats \
    $B/nvfp4-harness bench --group tma --only "M1_N5120_K25600" --reps 100 > $L/ncu-$k.log 2>&1
  echo "ncu $k rc=$?"; grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|Theoretical Occupancy|Block Limit|Grid Size|SM Frequency" $L/ncu-$k.log | head -14
done
