#!/usr/bin/env bash
# One call on the lent H200: the GPU test suites, compute-sanitizer, verify,
# the hash manifest, the benchmarks, the prefill replays and the kernel branch
# coverage, from binaries built on the dev machine and carried in BIN (preset
# cuda-sm90) and PROBES (preset cuda-probes, for the coverage step). Logs go
# to OUT (default ./out/device), and all of them into OUT/device-logs.tgz.
# Usage: [PROBES=dir] ci/device/h200-check.sh BIN [steps...]
#   steps: tests sanitize verify shards hash bench replay coverage (default all)
set -uo pipefail
bin="$1"; shift
out="${OUT:-out/device}"
mkdir -p "$out"
steps=("$@")
((${#steps[@]})) || steps=(tests sanitize verify shards hash bench replay coverage)
status=0
run() {  # run NAME CMD...: tee the output to $out/NAME.log, remember failures
  local name="$1"; shift
  echo "=== $name: $*"
  local t0=$(date +%s%N)
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "=== $name: rc=$rc, $((ms / 1000)).$(printf '%03d' $((ms % 1000))) s"
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
      run racecheck compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/kernels_tests" --gtest_filter='*Gemv*cuda*:*Exact*cuda*:*Fused*cuda*'
      run memcheck_props compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/property_tests" --gtest_filter='*cuda*'
      # the harness's own GPU kernels: ldmatrix and the last-block pattern's atomics
      run memcheck_harness compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/harness_exec_tests" --gtest_filter='*cuda*'
      run racecheck_harness compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/harness_exec_tests" --gtest_filter='*cuda*' ;;
    verify)
      run verify "$bin/nvfp4-harness" verify --backend cuda --out "$out/verify" ;;
    shards)
      # Two shards on this one GPU, one after the other, merged; the whole run
      # with the same seed; their manifests compared case by case.
      run verify_seed7 "$bin/nvfp4-harness" verify --backend cuda --seed 7 --out "$out/whole"
      run shard0 "$bin/nvfp4-harness" verify --backend cuda --seed 7 --shard 0/2 --out "$out/shard0"
      run shard1 env GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=1 "$bin/nvfp4-harness" verify --backend cuda --seed 7 \
        --out "$out/shard1"
      run merge "$bin/nvfp4-harness" merge --out "$out/merged" "$out/shard0" "$out/shard1"
      run compare_merged "$bin/nvfp4-harness" compare "$out/whole/manifest.json" "$out/merged/manifest.json" ;;
    hash)
      run hash "$bin/nvfp4-harness" hash --backend cuda --cases seed8 --out "$out/seed8.h200.json" ;;
    bench)
      run bench "$bin/nvfp4-harness" bench --json "$out/bench.json" ;;  # msweep included
    replay)
      for route in prefill_scalar prefill_vec8; do
        run "replay_$route" "$bin/nvfp4-harness" replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 \
          --chunk 256 --route "$route" --json "$out/replay_$route.json"
      done ;;
    coverage)
      run device_coverage env CASES=50 NVFP4_DEVICE_COVERAGE_OUT="$out/device-coverage" \
        bash ci/device-coverage.sh "${PROBES:?PROBES: the cuda-probes build}"
      run probe_cost env NVFP4_PROBE_COST_OUT="$out/probe-cost" bash coverage/probe-cost.sh "$bin" "$PROBES" 1 ;;
  esac
done
# The device tool brings back at most 8 files: everything also goes into one archive.
tar -czf "$out/../device-logs.tgz" -C "$out" . 2>/dev/null && mv "$out/../device-logs.tgz" "$out/"
exit $status
