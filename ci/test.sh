#!/usr/bin/env bash
# The test command of README.md: installs what is missing, builds a preset
# and runs every test with ctest. NVFP4_PRESET picks the preset: host by
# default; CI (.ci/run) passes coverage, so the one build it makes serves the
# tests, the coverage report (ci/coverage.sh) and the mutation sample.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${NVFP4_PRESET:-host}
case "$preset" in
  host | coverage) ;;
  *) echo "ci/test.sh: NVFP4_PRESET=$preset: must be host or coverage (the GPU presets: ci/verify.sh, ci/device/)" >&2
     exit 2 ;;
esac
bash ci/install-deps.sh
bash ci/build.sh "$preset"
if [ "$preset" = coverage ]; then
  # This run's counts only. One host-executor thread per test: gcov's
  # counters are plain adds (-fprofile-update=single, CMakeLists.txt), so
  # threads of one test would race on them; ctest -j keeps the cores busy.
  find build/coverage -name '*.gcda' -delete
  export NVFP4_HOST_THREADS=1
fi
ctest --preset "$preset" -j "$(nproc)" "$@"
