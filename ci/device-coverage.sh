#!/usr/bin/env bash
# Kernel branch coverage on the GPU (coverage/README.md, "On the GPU"):
#   ci/device-coverage.sh BUILD [HOST_INFO]
# BUILD is a probe-enabled CUDA build (cmake --preset cuda-probes &&
# cmake --build --preset cuda-probes: build/cuda-probes). HOST_INFO is an
# optional lcov tracefile of the host tests (ci/coverage.sh writes gcovr's
# counts as out/coverage/host.info, from any checkout: its paths are re-rooted
# here).
#   1. verify on the GPU, probes counting    -> device.info
#   2. verify on the host executor, the same binary, seed and cases
#                                            -> host-probes.info
#   3. the branches one reached and the other did not, both ways
#                                            -> branch-diff.txt (printed)
#   4. HTML of the GPU probes, and with HOST_INFO the host tracefile merged
#      with the GPU's (lcov -a)              -> device-html/, merged.info, merged-html/
# Output in out/device-coverage/ (index.html links it all). Needs lcov and
# genhtml for step 4 only; without them it says what to run elsewhere. lcov
# stays here because the probes' tracefile is lcov's format (harness/lcov_trace.h)
# and gcovr 5.2 reads only gcov data and its own JSON.
#   CASES  random cases per family in both verify runs (default 200)
# Exits non-zero when either verify run fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${1:?usage: ci/device-coverage.sh BUILD [HOST_INFO]}
host_info=${2:-}
out=${NVFP4_DEVICE_COVERAGE_OUT:-out/device-coverage}
cases=${CASES:-200}
bin="$build/nvfp4-harness"
rc=(--config-file "$root/coverage/lcovrc" --quiet)
[ -x "$bin" ] || { echo "device-coverage: no $bin (build the cuda-probes preset)" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"

run_verify() {  # run_verify BACKEND INFO
  local t0=$SECONDS status=0
  "$bin" verify --backend "$1" --cases "$cases" --out "$out/verify-$1" --source-root "$root" \
    --device-coverage "$out/$2" >"$out/verify-$1.txt" 2>&1 || status=$?
  echo "verify --backend $1: exit $status, $((SECONDS - t0)) s; $(grep '^summary:' "$out/verify-$1.txt" || echo 'no summary')" >&2
  sed -n '/^kernel branch coverage/,/^wrote/p' "$out/verify-$1.txt" | head -n 4 >&2
  return "$status"
}
gpu=0 host=0
run_verify cuda device.info || gpu=$?
[ -f "$out/device.info" ] || { echo "device-coverage: no device.info, see $out/verify-cuda.txt" >&2; tail -n 5 "$out/verify-cuda.txt" >&2; exit 1; }
run_verify host host-probes.info || host=$?
cp "$out/verify-cuda/route_gate.txt" "$out/verify-cuda/route_gate.json" "$out/" 2>/dev/null || true

awk -v a_name=GPU -v b_name=host -v root="$root" -f coverage/brda-diff.awk \
  "$out/device.info" "$out/host-probes.info" | tee "$out/branch-diff.txt"

if command -v lcov >/dev/null && command -v genhtml >/dev/null; then
  genhtml "${rc[@]}" --prefix "$root" --title "nvfp4-harness kernel branches on the GPU (probes)" \
    -o "$out/device-html" "$out/device.info"
  if [ -n "$host_info" ]; then
    # The host tracefile's paths, moved to this checkout.
    sed -E "s#^SF:.*/((kernels|harness|reference|properties|bench)/)#SF:$root/\1#" "$host_info" >"$out/host.info"
    lcov "${rc[@]}" -a "$out/host.info" -a "$out/device.info" -o "$out/merged.info"
    genhtml "${rc[@]}" --prefix "$root" --title "nvfp4-harness: host tests (gcov) + GPU (probes)" \
      -o "$out/merged-html" "$out/merged.info"
  fi
else
  echo "device-coverage: no lcov here; on a machine with lcov 1.16, from the repository root:" >&2
  echo "  genhtml --config-file coverage/lcovrc -o $out/device-html $out/device.info" >&2
  echo "  lcov --config-file coverage/lcovrc -a HOST_INFO -a $out/device.info -o $out/merged.info" >&2
fi
{
  echo "kernel branch probes, GPU ($(grep -m1 '^nvfp4-harness verify on' "$out/verify-cuda.txt" || true)):"
  sed -n 's/^kernel branch coverage (probes, [^)]*): //p' "$out/verify-cuda.txt" 2>/dev/null || true
  echo "kernel branch probes, host executor, same cases:"
  sed -n 's/^kernel branch coverage (probes, [^)]*): //p' "$out/verify-host.txt"
  tail -n 1 "$out/branch-diff.txt"
} >"$out/summary.txt"
bash coverage/index.sh "$out" "nvfp4-harness kernel branches: GPU and host" >/dev/null
cat "$out/summary.txt"
echo "device-coverage: open $out/index.html"
[ "$gpu" = 0 ] && [ "$host" = 0 ]
