#!/usr/bin/env bash
# One call on the lent H200: the GPU test suites, compute-sanitizer, verify,
# the hash manifest and the benchmarks, from binaries built on the dev machine
# (preset cuda-sm90) and carried in BIN. Logs go to OUT (default ./out/device).
# Usage: ci/device/h200-check.sh BIN [steps...]  steps: tests sanitize verify hash bench (default all)
set -uo pipefail
bin="$1"; shift
out="${OUT:-out/device}"
mkdir -p "$out"
steps=("$@")
((${#steps[@]})) || steps=(tests sanitize verify hash bench)
status=0
run() {  # run NAME CMD...: tee the output to $out/NAME.log, remember failures
  local name="$1"; shift
  echo "=== $name: $*"
  local t0=$(date +%s.%N)
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  printf '=== %s: rc=%d, %.1f s\n' "$name" "$rc" "$(echo "$(date +%s.%N) - $t0" | bc)"
  tail -n 4 "$out/$name.log"
  ((rc == 0)) || status=1
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
for step in "${steps[@]}"; do
  case "$step" in
    tests)
      run harness_exec_tests "$bin/harness_exec_tests"
      run kernels_tests "$bin/kernels_tests"
      run property_tests "$bin/property_tests" ;;
    sanitize)
      run memcheck compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/kernels_tests" --gtest_filter='*cuda*'
      run racecheck compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/kernels_tests" --gtest_filter='*Gemv*cuda*:*Exact*cuda*'
      run memcheck_props compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/property_tests" --gtest_filter='*cuda*' ;;
    verify)
      run verify "$bin/nvfp4-harness" verify --backend cuda --out "$out/verify" ;;
    hash)
      run hash "$bin/nvfp4-harness" hash --backend cuda --cases seed8 --out "$out/seed8.h200.json" ;;
    bench)
      run bench "$bin/nvfp4-harness" bench --json "$out/bench.json" ;;
  esac
done
exit $status
