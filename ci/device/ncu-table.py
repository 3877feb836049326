#!/usr/bin/env python3
"""Prints Nsight Compute runs side by side: one column a file of
`ncu --csv --page raw` output (one profiled launch each), one line a
metric, for the device scripts' profiles of two builds (PERF.md's
"Nsight Compute" tables). Standard library only, so it runs on the GPU
machine as it is.

A column is named by its file's stem with any leading "ncu-" taken off
(ncu-base.csv: "base"). A file without a launch's row is reported and left
out.

Written by hand: a few lines over ncu's CSV, which no tool here prints
side by side.

Usage: ncu-table.py RUN.csv [RUN.csv ...]
  e.g. ncu-table.py logs/ncu-base.csv logs/ncu-ws.csv
"""
import csv
import os
import sys

# Metric families the tables show (ncu's raw page also lists the launch's
# identity, device attributes and so on).
SHOWN = ("gpu__", "sm__", "smsp__", "lts__", "l1tex__", "launch__registers")


def first_launch(path):
    """{metric: value} of the first profiled launch in `path`, or None."""
    with open(path) as f:
        rows = list(csv.reader(line for line in f if line.startswith('"')))
    if len(rows) < 3:  # header, units, one launch
        return None
    header, _units, values = rows[0], rows[1], rows[2]
    return dict(zip(header, values))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("Usage: ")[1])
    columns = {}
    for path in sys.argv[1:]:
        launch = first_launch(path)
        if launch is None:
            print(f"ncu-table.py: no profiled launch in {path}")
            continue
        name = os.path.splitext(os.path.basename(path))[0]
        columns[name[4:] if name.startswith("ncu-") else name] = launch
    if not columns:
        sys.exit("ncu-table.py: no file had a profiled launch")
    metrics = [k for k in next(iter(columns.values())) if k.startswith(SHOWN)]
    print("metric".ljust(80), " ".join(c.rjust(18) for c in columns))
    for k in metrics:
        print(k[:80].ljust(80), " ".join(str(columns[c].get(k, "")).rjust(18) for c in columns))


if __name__ == "__main__":
    main()
