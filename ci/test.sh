#!/usr/bin/env bash
# The test command of README.md: installs what is missing, builds the host
# preset and runs every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
bash ci/build.sh host
ctest --preset host -j "$(nproc)" "$@"
