#!/usr/bin/env bash
# Prepared in the session of 2026-12-06 from 07:17 UTC for a later one (its last call got an H100 and
# ran nothing): prefill_fused against prefill_vec8, bf16 with bias, at M = 320 and 384 on the 24 weight
# shapes of h200-crossover-wtma.json, two runs, with a build of main as nvfp4-harness-new in
# build/carry2/bin.tgz (at 384 five of the targets round's 7 shapes were faster fused on this kernel,
# where the 24 shapes of 2026-12-03 mostly lost). On an H200 only (the table is the H200's): on
# another card it stops. Output: h200-crossover384-{1,2}.json.
set -uo pipefail
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
  timeout 100 /tmp/bin/nvfp4-harness-new bench --group msweep $S --m 320 --m 384 --only "bias M" \
    --json $OUT/h200-crossover384-$r.json > $OUT/x$r.log 2>&1
  echo "run $r rc=$?"
done
