#!/usr/bin/env bash
# Session of 2026-12-07 from 08:59 UTC: one call that is of use on whichever card comes. On an H200,
# prepack-round-call.sh (the prepack's GPU tests, the 8K replay --no-prepack / prepacked / prepacked
# / --no-prepack and on prefill_vec8, issue 16's targets bench, verify on the GPU): items 5 and 6
# are judged there and no H200 came in the session before. On any other card, where the prepacked
# wgmma kernel's time goes: Nsight Compute's warp-state and scheduler sections (stall reasons per
# issued instruction) and the throughput summary, one launch each at M = 128 on 4096 x 14336
# (w128n128, the M = 128 target's farthest shape from cuBLAS) and at M = 256 on 36864 x 5120
# (w256n128), bf16 with bias. build/carry6/bin.tgz holds nvfp4-harness and kernels_tests.
# Usage (device): bash bench/nvfp4_matmul/results/h200-or-stalls-call.sh TAG
set -uo pipefail
tag="${1:-s1207x}"
cd "$(dirname "$0")/../../.."
ab_bins=build/carry6/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_round_on_h200 "$tag"
echo "not an H200: the prepacked kernel's stalls"
ab_card
ncu_prepacked() {  # ncu_prepacked LIMIT_S OUTFILE SHAPE M NCU_ARGS...: one launch of the row
  local limit=$1 out=$2 shape=$3 m=$4
  shift 4
  timeout "$limit" ncu --clock-control none --kernel-name-base demangled \
    -k 'regex:PrefillFusedWgmmaOf' "$@" --launch-skip 2 --launch-count 1 --csv \
    /tmp/bin/nvfp4-harness bench --group msweep --shape "$shape" --m "$m" \
    --only "prefill_fused prepacked bias M${m}_" --reps 100 --json /tmp/b.json > "$out" 2>&1
}
stalls() {  # stalls NAME SHAPE M
  ncu_prepacked 150 "$OUT/ncu-sections-$1.csv" "$2" "$3" --section SpeedOfLight \
    --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --page details
  echo "== ncu $1 rc=$?"
}
# The stall reasons themselves (cycles a warp per issued instruction, by reason) are raw metrics the
# sections above do not print: the same launches again. (That part ran as the session's third call,
# typed inline. In results/: the sections as h100-s1207x-ncu-sections-*.csv, the reasons as
# h100-s1207x-ncu-stalls-*.csv.)
reasons() {  # reasons NAME SHAPE M
  ncu_prepacked 120 "$OUT/ncu-reasons-$1.csv" "$2" "$3" --metrics \
    'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,gpu__time_duration.sum' \
    --page raw
  echo "== ncu reasons $1 rc=$?"
}
stalls m128-4096x14336 4096x14336 128
stalls m256-36864x5120 36864x5120 256
reasons m128-4096x14336 4096x14336 128
reasons m256-36864x5120 36864x5120 256
python3 - "$OUT"/ncu-sections-*.csv <<'PY'
import csv, sys
for f in sys.argv[1:]:
    rows = list(csv.reader(l for l in open(f) if l.startswith('"')))
    if len(rows) < 2: print(f, 'no rows'); continue
    head = rows[0]
    print(f.split('/')[-1])
    for r in rows[1:]:
        d = dict(zip(head, r))
        print('  ', d.get('Section Name'), '|', d.get('Metric Name'), '|', d.get('Metric Value'), d.get('Metric Unit'))
PY
python3 - "$OUT"/ncu-reasons-*.csv <<'PY'
import csv, sys
for f in sys.argv[1:]:
    rows = list(csv.reader(l for l in open(f) if l.startswith('"')))
    if len(rows) < 3: print(f, 'no rows'); continue
    m = dict(zip(rows[0], rows[2]))
    st = {k[len('smsp__average_warps_issue_stalled_'):-len('_per_issue_active.ratio')]: float(v)
          for k, v in m.items() if k.startswith('smsp__average_warps_issue_stalled_')}
    print(f.split('/')[-1], m.get('gpu__time_duration.sum'), 'ns,', m.get('smsp__inst_executed.sum'), 'warp instructions')
    print('  ', ', '.join('%s %.2f' % kv for kv in sorted(st.items(), key=lambda kv: -kv[1]) if kv[1] >= 0.02))
PY
