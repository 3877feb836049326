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
# --test-timeout 300: with gcov's atomic counters (until 2026-12-06) the
# sample's killed mutants took 20 and 250 s of tests in one process on CI's
# two cores; with plain counter adds the whole suite is about 240 s of tests
# (ctest -j2: 123 s), so a survivor's whole judge, its binaries' cases
# shared over both cores (--jobs), fits in the limit, and a kill comes in
# seconds (each binary's cheap cases first: mutation.py's tiers). CI fails
# on a timeout as on a survivor (mutation.py).
exec python3 ci/mutation/mutation.py --ci --in-tree "$tree" --jobs "$(nproc)" --test-timeout 300 \
  --max-dependents "${MUTATION_MAX_DEPENDENTS:-10}" --sample "${MUTATION_SAMPLE:-8}" --seed "${MUTATION_SEED:-1}" "$@"
