#!/usr/bin/env bash
# Session of 2026-12-07 from 06:44 UTC: Nsight Compute on the wgmma kernel, one launch each, W in
# the contract's order and prepacked (36864 x 5120 at M = 256, bf16 with bias: w256n128), the
# metrics of the earlier sections (time, clock, tensor pipe, instructions, issue slots, L2, shared
# pipe). build/carry6/bin.tgz holds nvfp4-harness. Usage (device): bash .../prepack-ncu-call.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p /tmp/bin && tar -xzf build/carry6/bin.tgz -C /tmp/bin
m=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,launch__registers_per_thread
for row in "prefill_fused bias M256" "prefill_fused prepacked bias M256"; do
  timeout 80 ncu --clock-control none --kernel-name-base demangled --metrics "$m" -k 'regex:PrefillFusedWgmmaOf' \
    --launch-skip 2 --launch-count 1 --csv --page raw /tmp/bin/nvfp4-harness bench --group msweep \
    --shape 36864x5120 --m 256 --only "$row" --reps 100 --json /tmp/b.json > "$OUT/ncu-${row// /_}.csv" 2>&1
  echo "== ncu $row rc=$?"
done
python3 - "$OUT"/ncu-*.csv <<'PY'
import csv, sys
for f in sys.argv[1:]:
    rows = [r for r in csv.reader(l for l in open(f) if l.startswith('"'))]
    if len(rows) < 3: print(f, 'no rows'); continue
    head, data = rows[0], rows[2]
    print(f.split('/')[-1]); [print('  ', h, d) for h, d in zip(head, data) if '__' in h]
PY
