#!/usr/bin/env bash
# Session of 2026-12-07 from 08:59 UTC: the crossover with W prepacked, on an H200 only (the route
# table is the H200's): prefill_fused on the contract's order, prefill_fused prepacked and
# prefill_vec8, bf16 with bias, on the 24 weight shapes of h200-crossover-wtma.json at the given M,
# one run (a call holds one: about 60 s an M). build/carry6/bin.tgz holds nvfp4-harness.
# Output: h200-TAG-RUN.json. Prepared in that session for the route table's crossovers with the
# prepack (M = 384, 640, 768, 1024 first), to run once an H200 comes; not run there (no H200 came).
# CROSSOVER_LIMIT_S: the bench's time limit (560 s unless given; prepack-round-call.sh passes what
# its call has left).
# Usage (device): [CROSSOVER_LIMIT_S=S] bash .../prepack-crossover-call.sh TAG RUN M [M ...]
set -uo pipefail
(($# >= 3)) || { echo "usage: $0 TAG RUN M [M ...] (got $# arguments)" >&2; exit 2; }
tag=$1 run=$2; shift 2
ms=(); for m in "$@"; do ms+=(--m "$m"); done
cd "$(dirname "$0")/../../.."
ab_bins=build/carry6/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card h200-only
shapes=(2048x16384 3072x8192 4096x4096 4096x6144 4096x8192 4096x14336 5120x5120 5120x6144 5120x18432
  6144x4096 6144x6144 7168x4096 7168x7168 8192x4096 8192x5120 10240x4096 11008x4096 12288x4096
  13824x5120 14336x4096 16384x4096 18944x3584 28672x4096 36864x5120)
S=(); for s in "${shapes[@]}"; do S+=(--shape "$s"); done
t0=$SECONDS
timeout "${CROSSOVER_LIMIT_S:-560}" /tmp/bin/nvfp4-harness bench --group msweep "${S[@]}" "${ms[@]}" --only "bias M" \
  --json "$OUT/h200-$tag-$run.json" > "$OUT/x$run.log" 2>&1
echo "run $run rc=$? $((SECONDS - t0)) s"
python3 - "$OUT/h200-$tag-$run.json" <<'PY'
import json, sys, collections
rows = json.load(open(sys.argv[1]))['rows']
by = collections.defaultdict(dict)
for r in rows:
    if r['group'] == 'msweep' and r['M']:
        by[(r['M'], r['N'], r['K'])][r['name'].rsplit(' ', 1)[0]] = r['kernel_us']
for (m, n, k), us in sorted(by.items()):
    v = us.get('prefill_vec8 bias')
    f, p = us.get('prefill_fused bias'), us.get('prefill_fused prepacked bias')
    if v and f:
        print('M %5d %6dx%-6d fused/vec8 %.3f prepacked/vec8 %s' % (m, n, k, f / v, '%.3f' % (p / v) if p else '-'))
PY
