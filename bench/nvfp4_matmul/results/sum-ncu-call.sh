#!/usr/bin/env bash
# Session of 2026-12-06 from 07:17 UTC: what prefill_fused_sum costs in the replay's calls at M = 256
# (item 6), by Nsight Compute on main's binary (3fbf410), clocks and caches as the bench leaves them
# (--clock-control none --cache-control none: the sum reads the parts from the L2 the first kernel
# left). Each kernel of one call of the replay's four shapes (the 5th call of the bench's case):
# gpu__time_duration and where the time goes; the full sections for the sum on 5120 x 6144.
# Output: <card>-sum-ncu-*.{csv,log}.
set -uo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p /tmp/bin && tar -xzf build/carry2/bin.tgz -C /tmp/bin
B=/tmp/bin/nvfp4-harness
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
case "$name" in *H200*) card=h200 ;; *H100*) card=h100 ;; *) card=gpu ;; esac
m=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
m+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed
m+=,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active
m+=,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg.pct_of_peak_sustained_elapsed
m+=,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum
for shape in 8192x5120 5120x6144 5120x18432 36864x5120; do
  timeout 120 ncu --clock-control none --cache-control none --kernel-name-base demangled \
    -k 'regex:PrefillFused' --launch-skip 8 --launch-count 4 --metrics "$m" --csv \
    $B bench --group msweep --shape $shape --m 256 --only "prefill_fused bias M256" \
    > "$OUT/$card-sum-ncu-$shape.csv" 2> "$OUT/$card-sum-ncu-$shape.err"
  echo "== $shape rc=$?"
  python3 - "$OUT/$card-sum-ncu-$shape.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: sys.exit(print('  no rows'))
h = rows[0]; i = {k: h.index(k) for k in ('ID', 'Kernel Name', 'Metric Name', 'Metric Value')}
by = {}
for r in rows[1:]:
    by.setdefault((r[i['ID']], r[i['Kernel Name']][:40]), {})[r[i['Metric Name']]] = r[i['Metric Value']]
for (k, n), v in by.items():
    print(f"  {k:>3} {n:40s} " + ' '.join(f"{m.split('.')[0].split('__')[1][:18]}={v[m]}" for m in sorted(v)))
PY
done
timeout 120 ncu --clock-control none --cache-control none --kernel-name-base demangled \
  -k 'regex:PrefillFusedSum' --launch-skip 4 --launch-count 1 --set full \
  $B bench --group msweep --shape 5120x6144 --m 256 --only "prefill_fused bias M256" \
  > "$OUT/$card-sum-ncu-full-5120x6144.log" 2>&1
echo "== full rc=$?"
grep -E "Duration|Throughput|Hit Rate|Eligible|Issued Warp|Active Warps|Registers|Waves|Grid Size|Warp Cycles Per Issued|stalled|Stall" \
  "$OUT/$card-sum-ncu-full-5120x6144.log" | head -40
