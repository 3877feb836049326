#!/usr/bin/env python3
"""Every test named in a build's COSTS files (nvfp4_add_gtest's
<binary>_costs.cmake) is a test ctest knows: ctest ignores a COST set on a
name it does not have, so a renamed slow test would silently lose its place
at the head of `ctest -j` (CONTRIBUTING.md) and CI would slow down.

Usage: check-test-costs.py BUILD_DIR. Exits 1 naming each unknown test and
the file that names it; 2 when BUILD_DIR is not a configured build or has
no COSTS files at all."""
import json
import os
import re
import subprocess
import sys

NAMED = re.compile(r"^set_tests_properties\(\[==\[(.*)\]==\] PROPERTIES COST ", re.M)


def cost_names(build):
    """{test name: costs file} over the *_costs.cmake files of `build` (not
    of another build tree inside it, which has its own CMakeCache.txt)."""
    names = {}
    for top, dirs, files in os.walk(build):
        dirs[:] = sorted(d for d in dirs if not os.path.exists(os.path.join(top, d, "CMakeCache.txt")))
        for file in sorted(f for f in files if f.endswith("_costs.cmake")):
            path = os.path.join(top, file)
            with open(path) as f:
                for name in NAMED.findall(f.read()):
                    names[name] = os.path.relpath(path, build)
    return names


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    build = argv[1]
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        print("check-test-costs: %s is not a configured build (no CMakeCache.txt)" % build, file=sys.stderr)
        return 2
    names = cost_names(build)
    if not names:
        print("check-test-costs: no *_costs.cmake under %s (is it a configured build?)" % build, file=sys.stderr)
        return 2
    listing = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, capture_output=True, text=True,
                             check=True).stdout
    known = {t["name"] for t in json.loads(listing)["tests"]}
    unknown = sorted(n for n in names if n not in known)
    for n in unknown:
        print("check-test-costs: %s names %s, which is not a test of this build (renamed?)" % (names[n], n),
              file=sys.stderr)
    if unknown:
        return 1
    print("check-test-costs: all %d tests with a COST are tests of this build" % len(names))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
