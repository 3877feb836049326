#!/usr/bin/env bash
# Committed 2026-12-05 (session from 16:00 UTC), device call 4: cl2.tgz = build of experiment/cluster-multicast 01b98c0; occ = the program in h100-cluster-occupancy.cu. Output: h100-cluster-modes-*.json, h100-cluster-occupancy.txt.
# Session of 2026-12-05 from 16:00 UTC, call 3: the cluster launch alone (clusters of two, each block copying
# all of its A: NVFP4_CLUSTER_NO_SHARE=1) against main's kernel (NVFP4_NO_CLUSTER=1) and A shared by multicast
# (default), one binary (branch experiment/cluster-multicast); and how many clusters fit at once (occ).
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p /tmp/cl; tar -xzf build/carry2/cl2.tgz -C /tmp/cl; W=/tmp/cl/bin
L="$OUT/logs"; mkdir -p "$L"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
build/carry2/occ | tee "$L/occ.txt"
shapes=(--shape 8192x5120 --shape 5120x6144 --shape 5120x18432 --shape 36864x5120 --shape 4096x4096 --shape 14336x4096 --shape 4096x14336)
for run in off-1 noshare-1 share-1 share-2 noshare-2 off-2; do
  unset NVFP4_NO_CLUSTER NVFP4_CLUSTER_NO_SHARE
  case $run in off*) export NVFP4_NO_CLUSTER=1;; noshare*) export NVFP4_CLUSTER_NO_SHARE=1;; esac
  $W/nvfp4-harness bench --group msweep "${shapes[@]}" --m 256 --m 512 --only "prefill_fused bias" --json "$L/m-$run.json" > "$L/m-$run.log" 2>&1
  echo "$run rc=$?"
done
unset NVFP4_NO_CLUSTER NVFP4_CLUSTER_NO_SHARE
echo "== off -> noshare"; python3 ci/device/bench-ab.py "$L/m-off-1.json,$L/m-off-2.json" "$L/m-noshare-1.json,$L/m-noshare-2.json" --only "prefill_fused bias"
echo "== off -> share"; python3 ci/device/bench-ab.py "$L/m-off-1.json,$L/m-off-2.json" "$L/m-share-1.json,$L/m-share-2.json" --only "prefill_fused bias"
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
