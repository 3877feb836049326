#!/usr/bin/env bash
# Ran on an H100 80GB HBM3 (the call after 05:10 UTC, 2026-12-06) with gemv-fold-experiment.patch applied to the
# main of that session (bench_tests and nvfp4-harness of the cuda-sm90 preset in build/carry2/bin.tgz); the call
# after 04:52 UTC ran it without the msweep lines on the patch's first fold (one output a thread, the slices'
# loads one at a time): results h100-gemv-fold-scalar-*.json. PERF.md, the section of 04:15 UTC.
# Issue 16 item 7, branch experiment/gemv-fold (session of 2026-12-06 from 04:15 UTC): gemv_mma's sliced
# kernel with each group's last block adding the slices' parts (no second kernel) beside the route's two
# kernels, same binary, same sets; the bits first (bench_tests: folded = two kernels by memcmp, GPU and
# host), compute-sanitizer memcheck and racecheck on it, then the bench's tma group rows of the sliced
# kernel (5120 x 25600 M = 1/4/8, 4096 x 14336, 4096 x 4096, the lm_head; M = 1 and 8), two runs; the
# second call of the session (fold2): the last block's sum 4 outputs a thread, 8 slices' loads at once;
# and prefill_fused's GEMV-shaped path at M = 9 and 12 (msweep's gemv16 rows, 4096 x 14336, 14336 x 4096).
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=/tmp/bin; mkdir -p $B && tar -xzf build/carry2/bin.tgz -C $B
L="$OUT"; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
$B/bench_tests --gtest_filter='*GemvFold*:*GemvTma*' 2>&1 | tail -3
compute-sanitizer --tool memcheck $B/bench_tests --gtest_filter='*GemvFold*/cuda*' 2>&1 | tail -2
compute-sanitizer --tool racecheck $B/bench_tests --gtest_filter='*GemvFold*/cuda*' 2>&1 | tail -2
for rep in 1 2; do
  $B/nvfp4-harness bench --group tma --only "slices of 8 tiles" --only "read alone" --only "gemv_mma route" --json $L/fold-$rep.json > $L/fold-$rep.log 2>&1
  echo "bench $rep rc=$?"
  $B/nvfp4-harness bench --group msweep --shape 4096x14336 --shape 14336x4096 --m 9 --m 12 --only "slices of 8 tiles" --json $L/fold16-$rep.json > $L/fold16-$rep.log 2>&1
  echo "bench16 $rep rc=$?"
done
for pair in "fold-1.json fold-2.json" "fold16-1.json fold16-2.json"; do
set -- $pair
python3 - $L/$1 $L/$2 <<'PY'
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
bk={r["name"]:r for r in b["rows"]}
print("device", a["device"], "ceilings", round(a["copy_bytes_per_s"]/1e12,3), round(b["copy_bytes_per_s"]/1e12,3))
rows={r["name"]:r for r in a["rows"]}
for r in a["rows"]:
    n=r["name"]
    if ", folded" in n: continue
    f=n.replace(" (plan)","").replace(" slices of 8 tiles "," slices of 8 tiles, folded ")
    line="%-60s %7.2f %7.2f" % (n, r["kernel_us"], bk[n]["kernel_us"])
    if f in rows:
        fa, fb = rows[f]["kernel_us"], bk[f]["kernel_us"]
        line += "   folded %7.2f %7.2f   ratio %.3f %.3f" % (fa, fb, fa/r["kernel_us"], fb/bk[n]["kernel_us"])
    print(line)
PY
done
