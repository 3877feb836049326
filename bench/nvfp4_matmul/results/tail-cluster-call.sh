#!/usr/bin/env bash
# Session of 2026-12-06 from 15:48 UTC: the tail split's slices meeting in clusters of four
# (w256n128/tail-k4-cluster, 36864 x 5120 at M = 129..256), and, timing only, that tail launch
# overlapping the whole rounds' launch (programmatic dependent launch: the rounds' kernel lets it
# launch once its blocks have started, the tail's blocks wait for it before they exit; the new
# binary's route launches its tail so, the bench has both ways). One call:
# the fused GPU tests (new); the tail's variants in one binary (msweep rows with "tail"); the A/B
# rows old / new / new / old and the 8K replay base / new / new / base and on prefill_vec8
# (ab-replays.sh); the cluster and tail tests under compute-sanitizer memcheck and racecheck (from
# the call of the three-slice clusters on). build/carry2/bin.tgz holds nvfp4-harness-base (main, 64e7bff),
# nvfp4-harness-new and kernels_tests (new).
# Usage (device): bash bench/nvfp4_matmul/results/tail-cluster-call.sh TAG [h200-only]
set -uo pipefail
tag="${1:-tailcluster}"
cd "$(dirname "$0")/../../.."
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card "${2:-}"
t0=$SECONDS
timeout 170 /tmp/bin/kernels_tests --gtest_filter='*Fused*cuda*:GpuAgainstHost.*:PrefillFused*' > "$OUT/tests.log" 2>&1
echo "== kernel tests rc=$? $((SECONDS - t0)) s"
grep -E "^\[  (PASSED|FAILED) |FAILED  \]|SKIPPED  \]|(Cluster|Tail).*cuda" "$OUT/tests.log" | head -20
for run in 1 2; do
  timeout 120 /tmp/bin/nvfp4-harness-new bench --group msweep --shape 36864x5120 --m 128 --m 129 --m 192 \
    --m 256 --only "tail" --json "$OUT/$card-$tag-tails-$run.json" > "$OUT/bench-tails-$run.log" 2>&1
  echo "== bench tails $run rc=$? $((SECONDS - t0)) s"
done
python3 - "$OUT/$card-$tag-tails-1.json" "$OUT/$card-$tag-tails-2.json" <<'PY'
import json, sys
runs = [{r['name']: r['kernel_us'] for r in json.load(open(f))['rows']} for f in sys.argv[1:]]
for name in sorted(runs[0], key=lambda n: (n.split()[-1], n)):
    print(f"{name:72s} " + " ".join(f"{r.get(name, float('nan')):8.1f}" for r in runs))
PY
ab_benches
echo "== $((SECONDS - t0)) s"
replays_and_comparison
echo "== $((SECONDS - t0)) s"
ab_sanitizers 120
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *replay*.json) && rm -f "$OUT"/*.log "$OUT"/*replay*.json
