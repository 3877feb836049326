#!/usr/bin/env bash
# Session of 2026-12-06 from 07:17 UTC: issue 16's targets re-measured, whichever card the call gets,
# in one call. Run twice: first on an H100 with main's binary (3fbf410, preset cuda-sm90, then named
# nvfp4-harness), then on an H200 with nvfp4-harness-new (main with the bias loaded before the stores,
# bias-ab-call.sh landed), as the line B= below now says: the default bench (items 5 and 7),
# the 8K replay natural and on prefill_vec8 (item 6), and on an H200 the crossover above M = 384
# that the round of 2026-12-04 21:25 UTC questioned (h100-crossover-above384.sh ran it on an H100).
# Outputs: <card>-targets-{bench,replay-natural,replay-prefill_vec8}.json (+ <card>-targets-crossover-{1,2}.json).
# Usage (device): bash bench/nvfp4_matmul/results/targets-round-call.sh, build/carry2/bin.tgz carried;
# TARGETS_BIN names the binary in it (default nvfp4-harness), TARGETS_CROSSOVER=0 skips the crossover.
set -uo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p /tmp/bin && tar -xzf build/carry2/bin.tgz -C /tmp/bin
B=/tmp/bin/${TARGETS_BIN:-nvfp4-harness}
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
case "$name" in *H200*) card=h200 ;; *H100*) card=h100 ;; *) card=gpu ;; esac
step() {  # step NAME LIMIT_S CMD...: output to $OUT/NAME.log, rc and seconds here
  local n="$1" lim="$2"; shift 2
  local t0=$SECONDS
  timeout "$lim" "$@" > "$OUT/$n.log" 2>&1
  echo "== $n: rc=$? $((SECONDS - t0)) s"
}
step bench 330 $B bench --json "$OUT/$card-targets-bench.json"
for r in natural prefill_vec8; do
  step "replay-$r" 120 $B replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 \
    --chunk 256 --route $r --json "$OUT/$card-targets-replay-$r.json"
  python3 -c "
import json; d=json.load(open('$OUT/$card-targets-replay-$r.json')); print('replay $r total', round(d['total']['total_ms'],1), 'ms, dequant', round(d['total']['dequant_ms'],1), 'busy', round(d['busy_us']/1000,1), [(n['name'], round(n['total_ms'],1), round(n.get('dequant_ms',0),1)) for n in d['node_types']])"
done
if [ "$card" = h200 ] && [ "${TARGETS_CROSSOVER:-1}" = 1 ]; then
  shapes=(--shape 4096x4096 --shape 14336x4096 --shape 4096x14336 --shape 8192x5120 --shape 5120x6144
    --shape 5120x18432 --shape 36864x5120)
  for run in 1 2; do
    step "crossover-$run" 150 $B bench --group msweep "${shapes[@]}" --m 384 --m 448 --m 512 --m 640 \
      --m 768 --m 1024 --m 1536 --only "bias M" --json "$OUT/$card-targets-crossover-$run.json"
  done
fi
python3 - "$OUT" "$card" <<'PY'
import json, sys, re
out, card = sys.argv[1:]
rows = {r['name']: r for r in json.load(open(f'{out}/{card}-targets-bench.json'))['rows']}
def us(n): return rows[n]['kernel_us'] if n in rows else None
print('item 5: operator / cuBLAS BF16 alone and fused / read (kernel us, bias on)')
for shape in ('N4096_K4096', 'N14336_K4096', 'N4096_K14336'):
    read = us(f'weight bytes read alone M1_{shape}')
    cells = []
    for M in (9, 16, 32, 64, 128, 256, 512, 1024, 2048, 8192):
        f, v, c = (us(f'{r} M{M}_{shape}') for r in ('prefill_fused bias', 'prefill_vec8 bias', 'cuBLAS BF16 GEMM alone'))
        if None in (f, v, c): continue
        cells.append(f'M{M} f{f:.1f} v{v:.1f} c{c:.1f} f/c {f/c:.2f}' + (f' f/read {f/read:.2f}' if M <= 64 and read else ''))
    print(f'  {shape} read {read}: ' + '; '.join(cells))
print('item 7: share of the copy ceiling, kernel time')
for n, r in rows.items():
    if re.search(r'gemv_mma M[148]_N5120_K25600|read alone M1_N5120|prefill_vec8 dequant|cudaMemset of the scratch alone', n):
        print(f"  {n:60s} {r['kernel_us']:8.2f} us {100 * r['share_of_copy']:5.1f} %")
PY
if [ "$card" = h200 ] && [ "${TARGETS_CROSSOVER:-1}" = 1 ]; then
  python3 - "$OUT" <<'PY'
import json, sys, re
L = sys.argv[1]
rows = [{x['name']: x['kernel_us'] for x in json.load(open(f'{L}/h200-targets-crossover-{r}.json'))['rows']} for r in (1, 2)]
keys = sorted({re.sub(r'^\S+ bias ', '', n) for n in rows[0] if ' bias M' in n}, key=lambda k: (k.split('_')[1:], int(k.split('_')[0][1:])))
for k in keys:
    f = [r.get('prefill_fused bias ' + k) for r in rows]; v = [r.get('prefill_vec8 bias ' + k) for r in rows]
    if None in f or None in v: continue
    print(f"{k:24s} fused {f[0]:8.1f} {f[1]:8.1f}  vec8 {v[0]:8.1f} {v[1]:8.1f}  fused/vec8 {(f[0]+f[1])/(v[0]+v[1]):.3f}")
PY
fi
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log) && rm -f "$OUT"/*.log
