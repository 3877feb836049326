#!/usr/bin/env bash
# The out-of-tree operator (examples/axpb) built against the installed
# package, as a user would: `cmake --install` of a built preset into
# build/install, then examples/axpb configured with find_package(nvfp4_harness)
# from that prefix, built, and its tests run on the host executor (verify
# passes with every family and the gate; verify with a bug injected fails,
# naming the case). ci/example.sh [preset]: the preset whose build is
# installed (default: coverage, the one CI has just built).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-coverage}
build=build/$preset
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "ci/example.sh: $build is not built: run NVFP4_PRESET=$preset bash ci/test.sh first" >&2
  exit 2
fi
prefix=$PWD/build/install
rm -rf "$prefix" build/example
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S examples/axpb -B build/example -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build build/example -j "$(nproc)"
ctest --test-dir build/example --output-on-failure
