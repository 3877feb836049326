#!/usr/bin/env bash
# Session of 2026-12-05 from 06:55 UTC: the ring with warp 0 refilling one stage further ahead ("ahead", branch
# experiment/wgmma-ring-ahead 4791460) against main ("base", nvfp4-harness-base) and the first ring ("ring",
# nvfp4-harness of 295d7f4): tests, sanitizers, base/ring/ahead/ahead/ring/base, replay.
# Its A/B is printed by ci/device/bench-ab.py since the call (which ran the same means inline, a three-way
# table); from the committed h200-ahead-ab-*.json it gives the same ratios.
set -uo pipefail
cd "$(dirname "$0")/../.."
tar -xzf build/carry/bin.tgz -C /tmp; tar -xzf build/carry/ahead.tgz -C /tmp
B=/tmp/bin; A=/tmp/ahead
L="$OUT/logs"; mkdir -p "$L"
t0=$(date +%s); lap() { echo "##### $1 at $(( $(date +%s) - t0 )) s"; }
$A/kernels_tests --gtest_filter='*Fused*cuda*:GpuAgainstHost.*:PrefillFused*' > "$L/tests.log" 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED)" "$L/tests.log"; grep -E "TilesPastTheGrid.*cuda" "$L/tests.log"
lap tests
for tool in racecheck memcheck; do
  compute-sanitizer --tool $tool --print-limit 5 $A/kernels_tests \
    --gtest_filter='Backends/FusedOnBackend.TilesPastTheGrid*/cuda:Backends/FusedOnBackend.MatchesTheReferenceAtTileEdges/cuda' \
    > "$L/$tool.log" 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$L/$tool.log" | head -4
done
lap sanitizers
shapes=(--shape 8192x5120 --shape 5120x6144 --shape 5120x18432 --shape 36864x5120 --shape 4096x4096 --shape 14336x4096 --shape 4096x14336)
runs=(base-1 ring-1 ahead-1 ahead-2 ring-2 base-2)
for run in "${runs[@]}"; do
  case $run in base*) bin=$B/nvfp4-harness-base;; ring*) bin=$B/nvfp4-harness;; ahead*) bin=$A/nvfp4-harness;; esac
  $bin bench --group msweep "${shapes[@]}" --m 128 --m 192 --m 256 --m 512 --only "prefill_fused bias" --json "$L/m-$run.json" > "$L/m-$run.log" 2>&1
  echo "$run rc=$?"
done
for v in ring ahead; do
  python3 ci/device/bench-ab.py "$L/m-base-1.json,$L/m-base-2.json" "$L/m-$v-1.json,$L/m-$v-2.json" --only "prefill_fused bias"
done
lap ab
for run in base ahead; do
  bin=$A/nvfp4-harness; [[ $run == base ]] && bin=$B/nvfp4-harness-base
  $bin replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 --chunk 256 --route natural --json "$L/replay-$run.json" > "$L/replay-$run.log" 2>&1
  python3 -c "
import json; d=json.load(open('$L/replay-$run.json')); print('replay $run', round(d['busy_us']/1000,1), [(n['name'], round(n['total_ms'],1)) for n in d['node_types']])"
done
lap replay
nvidia-smi --query-gpu=name --format=csv,noheader
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
