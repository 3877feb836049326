#!/usr/bin/env bash
# Session of 2026-12-06 from 07:17 UTC: prefill_fused against prefill_vec8, bf16 with bias, at the
# given M on the 24 weight shapes of h200-crossover-wtma.json, two runs, with nvfp4-harness-new in
# build/carry2/bin.tgz (main with the bias loaded before the stores). On an H200 only (the route
# table is the H200's): on another card it stops. Output: h200-TAG-{1,2}.json.
#   crossover24 640 768 1024   the call after the targets round (h200-crossover24-{1,2}.json, held to
#                              by crossover_test.cc; run then as this loop typed inline)
#   crossover384 320 384       prepared for a later session: this session's last call got an H100
#                              (at 384 five of the targets round's 7 shapes were faster fused on this
#                              kernel, where the 24 shapes of 2026-12-03 mostly lost)
# Usage (device): bash bench/nvfp4_matmul/results/h200-crossover-call.sh TAG M [M ...]
set -uo pipefail
(($# >= 2)) || { echo "usage: $0 TAG M [M ...] (got $# arguments)" >&2; exit 2; }
tag=$1; shift
ms=(); for m in "$@"; do ms+=(--m "$m"); done
cd "$(dirname "$0")/../../.."
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
case "$name" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
S="--shape 2048x16384 --shape 3072x8192 --shape 4096x4096 --shape 4096x6144 --shape 4096x8192 --shape 4096x14336
  --shape 5120x5120 --shape 5120x6144 --shape 5120x18432 --shape 6144x4096 --shape 6144x6144 --shape 7168x4096
  --shape 7168x7168 --shape 8192x4096 --shape 8192x5120 --shape 10240x4096 --shape 11008x4096 --shape 12288x4096
  --shape 13824x5120 --shape 14336x4096 --shape 16384x4096 --shape 18944x3584 --shape 28672x4096 --shape 36864x5120"
mkdir -p /tmp/bin && tar -xzf build/carry2/bin.tgz -C /tmp/bin
for r in 1 2; do
  timeout 230 /tmp/bin/nvfp4-harness-new bench --group msweep $S "${ms[@]}" --only "bias M" \
    --json $OUT/h200-$tag-$r.json > $OUT/x$r.log 2>&1
  echo "run $r rc=$?"
done
