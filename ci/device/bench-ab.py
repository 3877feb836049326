#!/usr/bin/env python3
"""Compares the kernel times of two `nvfp4-harness bench --json` files, row
by row: an A/B of two builds run in one device call (PERF.md's A/Bs run
old / new / new / old and compare each pair). Standard library only, so it
runs on the GPU machine as it is.

Rows match by name (which holds the case: "prefill_fused bias
M256_N14336_K4096"); each line gives the old and new kernel time (us, back
to back) and new / old. Either side may be several runs joined by commas
(old-1.json,old-2.json: the old / new / new / old order's two runs a side):
each row's time is then their mean, over the rows every run of that side
has. --only keeps the rows whose name contains the text (repeatable, any of
them); --group keeps one bench group.

Written by hand: a few lines over two JSON files, which no tool here does.

Usage: bench-ab.py OLD.json[,OLD2.json...] NEW.json[,NEW2.json...] [--only TEXT ...] [--group G]
  e.g. bench-ab.py old.json new.json --only "prefill_fused bias" --group msweep
       bench-ab.py base-1.json,base-2.json ws-1.json,ws-2.json --only "prefill_fused bias"
"""
import argparse
import json
import signal
import sys


def kernel_times(path, groups, only):
    try:
        with open(path) as f:
            rows = json.load(f)["rows"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"bench-ab.py: {path}: not a bench JSON with a 'rows' list ({e})")
    times = {}
    for r in rows:
        if groups and r.get("group") not in groups:
            continue
        if only and not any(text in r["name"] for text in only):
            continue
        if r.get("kernel_us") is not None:
            times[(r.get("group"), r["name"])] = r["kernel_us"]
    return times


def mean_kernel_times(paths, groups, only):
    """The mean over the comma-joined runs in `paths` of each row they all have."""
    runs = [kernel_times(path, groups, only) for path in paths.split(",")]
    common = set.intersection(*(set(r) for r in runs))
    return {key: sum(r[key] for r in runs) / len(runs) for key in common}


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # piped into head: stop quietly
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--only", action="append", default=[], help="keep rows whose name contains TEXT")
    p.add_argument("--group", action="append", default=[], help="keep rows of this bench group")
    a = p.parse_args()
    old = mean_kernel_times(a.old, a.group, a.only)
    new = mean_kernel_times(a.new, a.group, a.only)
    common = sorted(set(old) & set(new))
    if not common:
        sys.exit(f"bench-ab.py: no row is in both {a.old} ({len(old)} kept) and {a.new} ({len(new)} kept)")
    width = max(len(name) for _, name in common)
    print(f"{'group':8} {'row':{width}} {'old us':>9} {'new us':>9} {'new/old':>8}")
    for group, name in common:
        o, n = old[(group, name)], new[(group, name)]
        print(f"{group:8} {name:{width}} {o:9.2f} {n:9.2f} {n / o:8.3f}")
    for label, only_in in (("old", set(old) - set(new)), ("new", set(new) - set(old))):
        if only_in:
            print(f"{len(only_in)} row(s) only in {label}, e.g. {sorted(only_in)[0][1]}")


if __name__ == "__main__":
    main()
