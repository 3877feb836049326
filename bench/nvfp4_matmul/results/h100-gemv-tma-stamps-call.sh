#!/usr/bin/env bash
# Ran on an H100 80GB HBM3 (the call after 06:18 UTC, 2026-12-06) with the gemv-tma-even, -slots, -early and
# -stamps experiment patches, in that order, applied to the main of that session; of its CSVs only six came back (the
# rest past the run's file count), three kept in h100-gemv-tma-stamps/; its printed summary is h100-gemv-tma-stamps.txt.
# Issue 16 item 7, branch experiment/gemv-tma-stamps (session of 2026-12-06 from 04:15 UTC): where the TMA
# GEMV's ~3 us over its copies goes. One launch each (after a warm-up) of the 3-slot kernel, whole and
# copies alone, no sum, M = 1, every slice count of the bench's tma rows, each block stamping the GPU's
# global timer at entry, A ready, its first slot landed, its last slot landed and its decode done (thread
# 0), and its SM; then each phase's spread over the blocks.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=/tmp/bin; mkdir -p $B && tar -xzf build/carry2/bin.tgz -C $B
L="$OUT"; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
$B/bench_tests --gtest_filter='*GemvTma*:*GemvMmaTma*' 2>&1 | tail -1
NVFP4_STAMPS_DIR=$L $B/nvfp4-harness bench --group tma --only "read alone M1_N5120" --only "read alone M1_N4224" --json $L/stamps-bench.json > $L/stamps-bench.log 2>&1
echo "bench rc=$?"; grep "read alone" $L/stamps-bench.log | head -2
python3 - $L <<'PY'
import csv, glob, os, statistics as st, sys
def q(v, f): v = sorted(v); return v[min(len(v) - 1, int(f * len(v)))]
for f in sorted(glob.glob(os.path.join(sys.argv[1], "stamps-*.csv"))):
    rows = list(csv.DictReader(open(f)))
    if not rows or "N248320" in f or "N4096" in f: continue
    e = [int(r["entry"]) for r in rows]; t0 = min(e)
    g = lambda k: [int(r[k]) - t0 for r in rows]
    entry, a, first, last, done = g("entry"), g("a_ready"), g("first_slot"), g("last_slot"), g("decoded")
    sms = {}
    for r in rows: sms.setdefault(r["sm"], []).append(int(r["entry"]) - t0)
    per_sm = [len(v) for v in sms.values()]
    late = sum(1 for x in entry if x > 1500)
    print("%s: %d blocks on %d SMs (%d-%d a SM), %d start after 1.5 us; span %.2f us" % (
        os.path.basename(f)[7:-4], len(rows), len(sms), min(per_sm), max(per_sm), late, (max(done)) / 1e3))
    for name, v in [("entry", entry), ("A ready", a), ("first slot", first), ("last slot", last), ("decoded", done),
                    ("A ready - entry", [y - x for x, y in zip(entry, a)]),
                    ("first slot - entry", [y - x for x, y in zip(entry, first)]),
                    ("last - first slot", [y - x for x, y in zip(first, last)]),
                    ("decoded - last slot", [y - x for x, y in zip(last, done)])]:
        print("   %-20s min %7.2f  p10 %7.2f  median %7.2f  p90 %7.2f  max %7.2f us" % (
            name, min(v) / 1e3, q(v, .1) / 1e3, st.median(v) / 1e3, q(v, .9) / 1e3, max(v) / 1e3))
PY
