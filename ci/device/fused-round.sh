#!/usr/bin/env bash
# One call on the lent H200 for prefill_fused (issue 16): its GPU tests (GPU =
# host bit for bit), compute-sanitizer memcheck and racecheck on them, the M
# sweep bench, the 8K-prompt replays on prefill_fused and prefill_vec8, and
# verify. BIN holds kernels_tests and nvfp4-harness of preset cuda-sm90.
# Logs go to OUT (default ./out/device), then into OUT/fused-logs.tgz.
# Usage: ci/device/fused-round.sh BIN [steps...]
#   steps: tests sanitize bench replay verify (default all)
set -uo pipefail
bin="$1"; shift
out="${OUT:-out/device}"
mkdir -p "$out"
steps=("$@")
((${#steps[@]})) || steps=(tests sanitize bench replay verify)
status=0
run() {  # run NAME CMD...: the output to $out/NAME.log, its tail and time here
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
fused_tests='*Fused*cuda*:GpuAgainstHost.*:PrefillFused*'
for step in "${steps[@]}"; do
  case "$step" in
    tests)
      run kernels_fused "$bin/kernels_tests" --gtest_filter="$fused_tests" ;;
    sanitize)
      run memcheck compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/kernels_tests" \
        --gtest_filter='*Fused*cuda*'
      run racecheck compute-sanitizer --tool racecheck --error-exitcode 9 "$bin/kernels_tests" \
        --gtest_filter='*Fused*cuda*' ;;
    bench)
      run bench "$bin/nvfp4-harness" bench --group msweep --json "$out/msweep.json" ;;
    replay)
      for route in prefill_fused prefill_vec8; do
        run "replay_$route" "$bin/nvfp4-harness" replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json \
          --prompt 8192 --chunk 256 --route "$route" --json "$out/replay_$route.json"
      done ;;
    verify)
      run verify "$bin/nvfp4-harness" verify --backend cuda --out "$out/verify" ;;
    *) echo "unknown step $step"; status=1 ;;
  esac
done
tar -czf "$out/fused-logs.tgz" -C "$out" --exclude=fused-logs.tgz . 2>/dev/null
exit $status
