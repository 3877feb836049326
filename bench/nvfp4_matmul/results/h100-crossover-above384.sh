#!/usr/bin/env bash
# Committed 2026-12-05 (session from 16:00 UTC) as run in its first device call, which asked for an H200 and got an H100 80GB HBM3: main's binary of 5729936 (kernel as main's since), carried as build/carry/bin.tgz. Output: h100-crossover-above384-{1,2}.json.
# Prepared in the session of 2026-12-04 from 23:08 UTC (no device then), for a later one: the crossover
# between prefill_fused and prefill_vec8 above M = 384, which the round of 2026-12-04 21:25 UTC questioned
# (fused ahead of vec8 at M = 1024 on 4096^2 and 4096x14336). Main's binary (bin/nvfp4-harness-base in
# bin.tgz, or a fresh build of main). Two runs, so a difference smaller than their spread is not read as one.
set -uo pipefail
cd "$(dirname "$0")/../.."
tar -xzf build/carry/bin.tgz -C /tmp
B=/tmp/bin/nvfp4-harness-base
L="$OUT/logs"; mkdir -p "$L"
shapes=(--shape 4096x4096 --shape 14336x4096 --shape 4096x14336 --shape 8192x5120 --shape 5120x6144 --shape 5120x18432 --shape 36864x5120)
for run in 1 2; do
  $B bench --group msweep "${shapes[@]}" --m 384 --m 448 --m 512 --m 640 --m 768 --m 1024 --m 1536 \
    --only "bias M" --json "$L/x-$run.json" > "$L/x-$run.log" 2>&1
  echo "run $run rc=$?"
done
python3 - "$L" <<'PY'
import json,sys,re
L=sys.argv[1]
rows=[{x['name']:x['kernel_us'] for x in json.load(open(f'{L}/x-{r}.json'))['rows']} for r in (1,2)]
keys=sorted({re.sub(r'^\S+ bias ','',n) for n in rows[0] if ' bias M' in n}, key=lambda k:(k.split('_')[1:],int(k.split('_')[0][1:])))
for k in keys:
  f=[r.get('prefill_fused bias '+k) for r in rows]; v=[r.get('prefill_vec8 bias '+k) for r in rows]
  if None in f or None in v: continue
  print(f"{k:24s} fused {f[0]:8.1f} {f[1]:8.1f}  vec8 {v[0]:8.1f} {v[1]:8.1f}  fused/vec8 {(f[0]+f[1])/(v[0]+v[1]):.3f}")
PY
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$L"
