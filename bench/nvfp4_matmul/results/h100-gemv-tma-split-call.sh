#!/usr/bin/env bash
# Prepared in the session of 2026-12-05 from 18:27 UTC, rebased onto 86ea784 in the session from 21:39 UTC; never run (no device machine could be started in either session).
# The TMA GEMV (3 slots) split: its copies alone (the decoding warps wait for each slot and free it, no
# decode) and its decode alone (no copy: wrong results), beside the whole kernel, the sliced kernel, the
# route and the weights read alone, 5120 x 25600, M = 1, 4, 8, two runs; Nsight Compute on one launch of
# each part at M = 1, 9 slices.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=/tmp/bin; mkdir -p $B && tar -xzf build/carry2/bin-split.tgz -C $B
L="$OUT"; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for rep in 1 2; do
  $B/nvfp4-harness bench --group tma --only N5120_K25600 --json $L/split-$rep.json > $L/split-$rep.log 2>&1; echo "bench $rep rc=$?"
done
python3 - $L/split-1.json $L/split-2.json <<'PY'
import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
bk={r["name"]:r["kernel_us"] for r in b["rows"]}
print("device", a["device"], "ceilings", round(a["copy_bytes_per_s"]/1e12,3), round(b["copy_bytes_per_s"]/1e12,3))
for r in a["rows"]:
    if "4 slots" in r["name"] or "1 ahead" in r["name"]: continue
    print("%-62s %7.2f %7.2f" % (r["name"], r["kernel_us"], bk.get(r["name"], 0)))
PY
S="--section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats --section InstructionStats"
for v in "tma decode alone 9 slices" "tma copies alone 9 slices" "tma 3 slots 9 slices"; do
  f=$L/ncu-$(echo $v | tr -c "a-z0-9\n" "_").log
  ncu --clock-control none --kernel-name-base demangled -k regex:'GemvMmaTmaOf' --launch-skip 3 --launch-count 1 $S \
    $B/nvfp4-harness bench --group tma --only "$v M1_N5120_K25600" --reps 100 > $f 2>&1
  echo "== ncu $v rc=$?"; grep -E "^  [a-z].*GemvMma|Duration|DRAM Throughput|SM Frequency|Issued Warp Per Scheduler|No Eligible|Achieved Active Warps|Executed Instructions  |Warp Cycles Per Issued" $f | head -10
done
# The 8K-prompt replay, natural and prefill_vec8, same binary (item 6's ratio), on an H200 only.
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || exit 0
# On an H200 only: the M sweep above M = 256 on 4096 x 4096 (the crossover), one run.
$B/nvfp4-harness bench --group msweep --shape 4096x4096 --m 256 --m 384 --m 512 --m 1024 --json $L/msweep-h200.json > $L/msweep-h200.log 2>&1; echo "msweep rc=$?"
grep -E "M(256|384|512|1024)_" $L/msweep-h200.log | head -40
for r in natural prefill_vec8; do
  $B/nvfp4-harness replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 --chunk 256 --route $r --json "$L/replay-$r.json" > "$L/replay-$r.log" 2>&1
  echo "replay $r rc=$?"
  python3 -c "
import json; d=json.load(open('$L/replay-$r.json')); print('replay $r', round(d['busy_us']/1000,1), [(n['name'], round(n['total_ms'],1), round(n.get('dequant_ms',0),1)) for n in d['node_types']])"
done
