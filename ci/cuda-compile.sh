#!/usr/bin/env bash
# CI's check that the device code compiles (no GPU there): every CUDA source
# (.cu) of the cuda preset, compiled by nvcc for sm_80, sm_90a and sm_120a,
# and nothing else (the host code is the test build's). Between them the
# three take every architecture branch the code has: `__CUDA_ARCH__ >= 800`
# (cp.async, harness/device_ctx.cuh), `__CUDA_ARCH_FEAT_SM90_ALL` (wgmma's
# inline PTX, which only sm_90a assembles: with sm_80 and sm_120a alone a
# misspelt wgmma instruction compiled; with sm_90a ptxas stops on it) and
# the FP4 conversions cuda_fp4.h makes hardware instructions on
# sm_100a/sm_120a. sm_90a adds about 37 s on CI's two cores (74 -> 111 s).
# The full four-architecture build is `bash ci/build.sh cuda`; the H200 runs
# sm_90a (ci/device/).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/cuda-compile
bash ci/install-deps.sh >/dev/null
cmake --preset cuda -B "$build" -DCMAKE_CUDA_ARCHITECTURES="80;90a;120a" >/dev/null
mapfile -t objects < <(ninja -C "$build" -t targets all | grep -o '^[^:]*\.cu\.o' | sort -u)
[ "${#objects[@]}" -gt 0 ] || { echo "cuda-compile: no CUDA objects in $build" >&2; exit 1; }
echo "cuda-compile: ${#objects[@]} CUDA sources for sm_80, sm_90a and sm_120a"
ninja -C "$build" -j "$(nproc)" "${objects[@]}"
