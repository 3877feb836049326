#!/usr/bin/env bash
# CI's mutation check: a fixed, seeded, stratified sample of kernels/ mutants
# judged by the host suite; exits non-zero if a sampled mutant survives that
# ci/mutation/equivalent.json does not waive. Options pass through to
# ci/mutation/mutation.py (e.g. --sample 40 --seed 7); ci/mutation/README.md
# has the measured cost. Reports: out/mutation/report.{json,md}.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v mutate >/dev/null 2>&1; then
  python3 -m pip install --quiet universalmutator==1.14.1
fi
bash ci/install-deps.sh >/dev/null
if ! command -v ninja >/dev/null 2>&1; then  # the mutation tree alone builds with Ninja (ninja -t deps, -t inputs)
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends ninja-build
fi
# --test-timeout 300: the judged tests took 56 to 118 s here (2 cores shared with other builds);
# 300 s tells a mutant whose loop never ends from a slow run.
exec nice -n 19 python3 ci/mutation/mutation.py --ci --test-timeout 300 --sample "${MUTATION_SAMPLE:-6}" --seed "${MUTATION_SEED:-1}" "$@"
