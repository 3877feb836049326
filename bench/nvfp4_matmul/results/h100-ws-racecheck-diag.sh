#!/usr/bin/env bash
# Ran from build/carry2 (carried binaries: base.tgz = main's nvfp4-harness-base, ws.tgz = the branch's build).
# Session of 2026-12-05 from 10:40 UTC: which order racecheck does not see in the warp-specialized kernel
# (64 hazards between the consumers' scale loads and the producer's scale cp.asyncs): every consumer thread
# arriving on the empty barriers (no __syncwarp + one lane), the producer waiting its cp.asyncs and arriving
# plainly (no cp.async.mbarrier.arrive), and both.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p /tmp/d; tar -xzf build/carry2/diag.tgz -C /tmp/d
L="$OUT/logs"; mkdir -p "$L"
for v in every-thread wait-arrive both; do
  compute-sanitizer --tool racecheck --print-limit 3 /tmp/d/bin/kt-$v \
    --gtest_filter='Backends/FusedOnBackend.TilesPastTheGrid*/cuda:Backends/FusedOnBackend.MatchesTheReferenceAtTileEdges/cuda' > "$L/racecheck-$v.log" 2>&1
  echo "$v rc=$?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" "$L/racecheck-$v.log"; grep -m2 -A1 "Error: Race" "$L/racecheck-$v.log"
done
nvidia-smi --query-gpu=name --format=csv,noheader
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
