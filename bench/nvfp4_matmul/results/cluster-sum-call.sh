#!/usr/bin/env bash
# Session of 2026-12-06 from 11:55 UTC: thread-block clusters in the harness and the wgmma split's
# two slices added in a cluster (FusedPlan::cluster_sum) in place of prefill_fused_sum. One call:
# the harness's cluster tests and the fused GPU tests on the GPU; the two ways of the same split
# side by side in one binary (msweep rows ".../k2" and ".../k2-cluster", seven shapes at M = 128,
# 256, 512); the plan's own rows old / new / new / old (base: main's binary) and the 8K replay
# base / new / new / base and on prefill_vec8 (both ab-replays.sh's); last, the cluster tests and the
# fused cluster test under compute-sanitizer (memcheck, racecheck; synccheck on the harness's).
# build/carry2/bin.tgz holds nvfp4-harness-base (main), nvfp4-harness-new, kernels_tests and
# harness_exec_tests (new). Usage (device): bash bench/nvfp4_matmul/results/cluster-sum-call.sh TAG
# [h200-only] (then on any other card it runs nothing).
set -uo pipefail
tag="${1:-clustersum}"  # the files' tag: clustersum1 (the first epilogue), clustersum2
cd "$(dirname "$0")/../../.."
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card "${2:-}"
timeout 100 /tmp/bin/harness_exec_tests --gtest_filter='*Cluster*:*CoResident*:*LastBlock*' > "$OUT/exec-tests.log" 2>&1
echo "== exec tests rc=$?"; grep -E "^\[ +(OK|PASSED|FAILED|SKIPPED) " "$OUT/exec-tests.log" | grep -E "Cluster.*cuda|PASSED|FAILED|SKIPPED"
timeout 150 /tmp/bin/kernels_tests --gtest_filter='*Fused*cuda*:GpuAgainstHost.*:PrefillFused*' > "$OUT/tests.log" 2>&1
echo "== kernel tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|SKIPPED  \]|Cluster.*cuda" "$OUT/tests.log" | head
timeout 200 /tmp/bin/nvfp4-harness-new bench --group msweep "${ab_shapes[@]}" --m 128 --m 256 --m 512 \
  --only "/k2" --json "$OUT/$card-$tag-splits.json" > "$OUT/bench-splits.log" 2>&1
echo "== bench splits rc=$?"
python3 - "$OUT/$card-$tag-splits.json" <<'PY'
import json, sys
rows = {r['name']: r['kernel_us'] for r in json.load(open(sys.argv[1]))['rows']}
for name, us in sorted(rows.items()):
    if '-cluster ' not in name: continue
    two = name.replace('-cluster ', ' ')
    if two in rows: print(f"{name:60s} two kernels {rows[two]:7.1f}  cluster {us:7.1f}  {us / rows[two]:.3f}")
PY
ab_benches
replays_and_comparison
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 /tmp/bin/harness_exec_tests \
    --gtest_filter='*Cluster*cuda*' > "$OUT/exec-$tool.log" 2>&1
  echo "== exec $tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$OUT/exec-$tool.log"
done
for tool in memcheck racecheck; do
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 9 /tmp/bin/kernels_tests \
    --gtest_filter='*SlicesThatMeetInAClusterGiveTheTwoKernelsBits*cuda*' > "$OUT/kernels-$tool.log" 2>&1
  echo "== kernels $tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$OUT/kernels-$tool.log"
done
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *replay*.json) && rm -f "$OUT"/*.log "$OUT"/*replay*.json
