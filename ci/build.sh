#!/usr/bin/env bash
# Configures and builds one CMake preset: ci/build.sh host|cuda|cuda-sm90|coverage [targets...]
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-host}"
shift || true
jobs="$(nproc)"
cmake --preset "$preset" >/dev/null
if (($#)); then
  cmake --build --preset "$preset" -j "$jobs" --target "$@"
else
  cmake --build --preset "$preset" -j "$jobs"
fi
