#!/usr/bin/env bash
# Session of 2026-12-06 from 07:17 UTC, the call after targets-round-call.sh's on the H200 (run inline
# then; this file is that command): prefill_fused against prefill_vec8, bf16 with bias, at M = 640,
# 768 and 1024 on the 24 weight shapes of h200-crossover-wtma.json, two runs, with nvfp4-harness-new
# (main with the bias loaded before the stores). Output: h200-crossover24-{1,2}.json; the route
# table's band at 768 and 1024 (route_table.cc) is held to them (bench/nvfp4_matmul/crossover_test.cc).
set -uo pipefail
cd "$(dirname "$0")/../../.."
S="--shape 2048x16384 --shape 3072x8192 --shape 4096x4096 --shape 4096x6144 --shape 4096x8192 --shape 4096x14336
  --shape 5120x5120 --shape 5120x6144 --shape 5120x18432 --shape 6144x4096 --shape 6144x6144 --shape 7168x4096
  --shape 7168x7168 --shape 8192x4096 --shape 8192x5120 --shape 10240x4096 --shape 11008x4096 --shape 12288x4096
  --shape 13824x5120 --shape 14336x4096 --shape 16384x4096 --shape 18944x3584 --shape 28672x4096 --shape 36864x5120"
mkdir -p /tmp/bin && tar -xzf build/carry2/bin.tgz -C /tmp/bin
nvidia-smi --query-gpu=name --format=csv,noheader
for r in 1 2; do
  timeout 230 /tmp/bin/nvfp4-harness-new bench --group msweep $S --m 640 --m 768 --m 1024 --only "bias M" \
    --json $OUT/h200-crossover24-$r.json > $OUT/x$r.log 2>&1
  echo "run $r rc=$?"
done
