#!/usr/bin/env bash
# CI's mutation check: a fixed, seeded, stratified sample of kernels/nvfp4_matmul/ mutants
# judged by the host suite inside an already-built tree (MUTATION_TREE,
# default build/coverage: the tree CI's test command just built and tested),
# mutating the work tree in place and restoring it after each mutant. Exits
# non-zero if a sampled mutant survives that ci/mutation/equivalent.json does
# not waive. Files more than MUTATION_MAX_DEPENDENTS (default 10) objects
# include are left out of CI's sample (their mutants rebuild 14 to 30 objects;
# the full run in ci/mutation/report.md judges them). Options pass through to
# ci/mutation/mutation.py; ci/mutation/README.md has the measured cost.
# Reports: out/mutation/report.{json,md}.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mutate >/dev/null 2>&1; then
  python3 -m pip install --quiet universalmutator==1.14.1
fi
bash ci/install-deps.sh >/dev/null
tree=${MUTATION_TREE:-build/coverage}
[ -f "$tree/build.ninja" ] || { echo "mutation: $tree is not built (run the test command first: bash ci/test.sh)" >&2; exit 2; }
# --test-timeout 300: on CI's two cores the sample's killed mutants took 20
# and 250 s of tests in one process (the second's killing test, 3.3 s, came
# late in kernels_tests on the gcov tree), about half that with each
# binary's cases shared over both cores (--jobs), and less again with the
# cheap cases run first (mutation.py's tiers); a survivor's whole judge (some
# 900 s of tests) outlasts 300 s, and CI fails on a timeout as on a survivor
# (mutation.py), so the limit only decides how soon.
exec python3 ci/mutation/mutation.py --ci --in-tree "$tree" --jobs "$(nproc)" --test-timeout 300 \
  --max-dependents "${MUTATION_MAX_DEPENDENTS:-10}" --sample "${MUTATION_SAMPLE:-8}" --seed "${MUTATION_SEED:-1}" "$@"
