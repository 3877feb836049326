#!/usr/bin/env python3
"""Writes a gcovr JSON report (gcovr --json) as an lcov tracefile on stdout:
    python3 coverage/gcovr-json-to-lcov.py host.json ROOT > host.info
ROOT is the folder gcovr's paths are relative to (its --root).

Written by hand because gcovr 5.2 (Debian 12) has no lcov writer, and
ci/device-coverage.sh merges the host's counts with the GPU probes' lcov
tracefile (harness/lcov_trace.h) through lcov -a / genhtml. It writes what the
gcovr report counts, nothing more: a line gcovr drops (noncode, excluded)
is left out, and a line's branches are the ones gcovr kept after its filters
(ci/coverage.sh), as block 0, so they never mix with the probes' block 9000.
Function records are left out: the merged view is about lines and branches.
"""
import json
import os
import sys


def record(f, root):
    """The tracefile record of one file of the gcovr report, as lines."""
    out = ["TN:", "SF:" + os.path.join(root, f["file"])]
    lines = [l for l in f["lines"] if not l["gcovr/noncode"] and not l["gcovr/excluded"]]
    found = hit = 0
    for l in lines:
        for i, b in enumerate(l["branches"]):
            # lcov writes '-' for a branch whose line never ran.
            taken = b["count"] if l["count"] > 0 else "-"
            out.append(f"BRDA:{l['line_number']},0,{i},{taken}")
            found += 1
            hit += b["count"] > 0
    if found:
        out += [f"BRF:{found}", f"BRH:{hit}"]
    for l in lines:
        out.append(f"DA:{l['line_number']},{l['count']}")
    out += [f"LF:{len(lines)}", f"LH:{sum(l['count'] > 0 for l in lines)}", "end_of_record"]
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gcovr-json-to-lcov.py REPORT.json ROOT > OUT.info")
    with open(sys.argv[1]) as report:
        data = json.load(report)
    version = str(data.get("gcovr/format_version"))
    if version != "0.3":  # gcovr 5.2's; another one may name its fields differently
        sys.exit(f"gcovr-json-to-lcov: {sys.argv[1]}: gcovr/format_version {version}, expected 0.3")
    for f in data["files"]:
        print("\n".join(record(f, sys.argv[2])))


main()
