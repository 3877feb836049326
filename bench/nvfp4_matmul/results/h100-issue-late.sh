#!/usr/bin/env bash
# Committed 2026-12-05 (session from 16:00 UTC), device call 9: ia.tgz = build of branch experiment/issue-after-first-wgmma 13ada0e (bin/) and main's kernel (base/). Output: h100-issue-late-*.json.
# Session of 2026-12-05 from 16:00 UTC, call 9: prefill_fused_wgmma with the next stage's copies issued after the
# stage's first wgmma group (branch experiment/issue-after-first-wgmma) against main (base/nvfp4-harness, a build
# of main's kernel): tests, sanitizers, base/new/new/base at M = 128, 256, 512, replay.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p /tmp/ia; tar -xzf build/carry2/ia.tgz -C /tmp/ia; N=/tmp/ia/bin; B=/tmp/ia/base
L="$OUT/logs"; mkdir -p "$L"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
$N/kernels_tests --gtest_filter='*Fused*cuda*:GpuAgainstHost.*:PrefillFused*' > "$L/tests.log" 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|^\[  FAILED" "$L/tests.log"; grep -E "TwoTiles|PrefillWgmmaOutput" "$L/tests.log" | head -3
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --print-limit 5 $N/kernels_tests \
    --gtest_filter='GpuAgainstHost.PrefillWgmma*:Backends/FusedOnBackend.TilesPastTheGrid*/cuda' > "$L/$tool.log" 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$L/$tool.log" | head -4
done
shapes=(--shape 8192x5120 --shape 5120x6144 --shape 5120x18432 --shape 36864x5120 --shape 4096x4096 --shape 14336x4096 --shape 4096x14336)
for run in base-1 new-1 new-2 base-2; do
  case $run in base*) bin=$B/nvfp4-harness;; *) bin=$N/nvfp4-harness;; esac
  $bin bench --group msweep "${shapes[@]}" --m 128 --m 256 --m 512 --only "prefill_fused bias" --json "$L/m-$run.json" > "$L/m-$run.log" 2>&1
  echo "$run rc=$?"
done
python3 ci/device/bench-ab.py "$L/m-base-1.json,$L/m-base-2.json" "$L/m-new-1.json,$L/m-new-2.json" --only "prefill_fused bias"
for run in base new base2 new2; do
  case $run in base*) bin=$B/nvfp4-harness;; *) bin=$N/nvfp4-harness;; esac
  $bin replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 --chunk 256 --route natural --json "$L/replay-$run.json" > "$L/replay-$run.log" 2>&1
  python3 -c "
import json; d=json.load(open('$L/replay-$run.json')); print('replay $run', round(d['busy_us']/1000,1))"
done
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
