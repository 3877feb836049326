#!/usr/bin/env bash
# Session of 2026-12-07 from 08:59 UTC, an experiment (not landed): the mma.sync shapes (M <= 64)
# with 256 rows of W a block, 8 warps along N and one along K (PrefillFused<kMTiles, 4, 1, 8, 1,
# stages>: 16 x 256 at 9 stages, 32 x 256 at 8, 64 x 256 at 6, under the names m16n64, m32n128 and
# m64n128), against main's 64 / 128 rows. PERF.md's split of M <= 64 found the copies alone over the
# target, bringing A into every block once per 64 or 128 rows of W (as many bytes as W's at M = 16
# with 64 rows); 256 rows bring it a quarter or half as often, with more K slices to fill the SMs.
# build/carry7/bin.tgz holds nvfp4-harness-base (main) and nvfp4-harness-new (the variant build).
# base / new / new / base, the msweep's fused rows (the plan's, with bias, and each split forced)
# and the flat read of the weight bytes at M = 16, 32, 64 on ab-replays.sh's seven shapes.
# Usage (device): bash bench/nvfp4_matmul/results/n256-tiles-call.sh TAG
set -uo pipefail
tag="${1:-n256}"
cd "$(dirname "$0")/../../.."
ab_bins=build/carry7/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card
ab_ms=(--m 16 --m 32 --m 64)
ab_only=(--only "prefill_fused bias M" --only "prefill_fused m" --only "weight bytes read alone")
t0=$SECONDS
ab_benches
echo "== $((SECONDS - t0)) s"
python3 - "$OUT/$card-$tag" <<'PY'
import json, sys, collections
pre = sys.argv[1]
def rows(side):
    by = collections.defaultdict(list)
    for run in (1, 2):
        for r in json.load(open('%s-%s-%d.json' % (pre, side, run)))['rows']:
            by[r['name']].append(r['kernel_us'])
    return {k: sum(v) / len(v) for k, v in by.items()}
base, new = rows('base'), rows('new')
reads = {n.rsplit(' ', 1)[1].split('_', 1)[1]: us for n, us in base.items() if n.startswith('weight bytes read alone')}
for n in sorted(base, key=lambda n: (n.rsplit(' ', 1)[1].split('_', 1)[1], int(n.rsplit(' ', 1)[1].split('_')[0][1:]), n)):
    if not n.startswith('prefill_fused') or n not in new: continue
    shape = n.rsplit(' ', 1)[1].split('_', 1)[1]
    read = reads.get('M0_' + shape) or next((v for k, v in reads.items() if k.endswith(shape)), None)
    extra = ' | /read %.2f -> %.2f' % (base[n] / read, new[n] / read) if read and 'bias' in n else ''
    print('%-60s %7.1f %7.1f  new/base %.3f%s' % (n, base[n], new[n], new[n] / base[n], extra))
PY
