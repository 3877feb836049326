#!/usr/bin/env bash
# One call on the lent H200 for prefill_fused (issue 16): its GPU tests (GPU =
# host bit for bit), compute-sanitizer memcheck and racecheck on them, the M
# bench (every default group, msweep included, then group depth), the
# 8K-prompt replays on prefill_fused and prefill_vec8, the seed8 hash
# manifest, verify, Nsight Compute on the fused kernel (its
# gpu__time_duration beside the bench's kernel time, and the stall reasons),
# and Nsight Compute on item 7's kernels (gemv_mma on 5120 x 25600 at M = 1,
# 4, 8 and prefill_vec8's dequant at 4096 x 4096), each one launch of
# `nvfp4-harness run --route R` on a file of write-inputs.py. Nsight Compute
# runs with the clocks unlocked (--clock-control none), as the bench runs, so
# its gpu__time_duration compares with the bench's kernel time (PERF.md);
# keep `run` problems small (its check of the result runs on the host: at
# M = 1024 it outlasts the 150 s limit).
# BIN holds kernels_tests and nvfp4-harness of preset cuda-sm90 (and
# harness_exec_tests for step tma).
# Logs go to OUT (default ./out/device), then into OUT/fused-logs.tgz.
# Usage: ci/device/fused-round.sh BIN [steps...]
#   steps: tests tma sanitize bench depth replay hash verify ncu ncu7 (default all)
set -uo pipefail
bin="$1"; shift
out="${OUT:-out/device}"
mkdir -p "$out"
steps=("$@")
((${#steps[@]})) || steps=(tests tma sanitize hash verify bench replay ncu ncu7 depth)
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
    tma)
      # The harness's TMA tests on the GPU, then, in its own process, the box
      # the host refuses for starting off 16 bytes (harness/tma_test.cc).
      run tma "$bin/harness_exec_tests" --gtest_filter='*Tma*:*TensorMap*'
      run tma_off16 "$bin/harness_exec_tests" --gtest_also_run_disabled_tests \
        --gtest_filter='TmaOnTheGpu.DISABLED_ABoxOffSixteenBytesFaults' ;;
    sanitize)
      run memcheck compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/kernels_tests" \
        --gtest_filter='*Fused*cuda*'
      # The tests' references run cuBLAS (prefill_vec8's GEMM step), and at
      # the tail plan's sizes racecheck reports hazards inside cuBLAS's own
      # kernels (nvjet_sm90_*, 2026-12-03); excluding them from the check
      # (--kernel-name-exclude kns=nvjet) made the sanitizer fail on a
      # hardware exception. So every kernel is checked, and the step fails
      # on a hazard in any kernel but cuBLAS's, whose count it prints.
      run racecheck compute-sanitizer --tool racecheck "$bin/kernels_tests" \
        --gtest_filter='*Fused*cuda*'
      ours=$(grep -E "Race reported" "$out/racecheck.log" | grep -vc "nvjet_")
      theirs=$(grep -E "Race reported" "$out/racecheck.log" | grep -c "nvjet_")
      echo "=== racecheck: $ours hazard reports in our kernels, $theirs in cuBLAS's (nvjet_*)"
      grep -q "RACECHECK SUMMARY" "$out/racecheck.log" && ((ours == 0)) || status=1 ;;
    bench)
      run bench "$bin/nvfp4-harness" bench --json "$out/bench.json" ;;
    depth)
      run depth "$bin/nvfp4-harness" bench --group depth --json "$out/depth.json" ;;
    hash)
      run hash "$bin/nvfp4-harness" hash --backend cuda --cases seed8 --out "$out/seed8.h200.json" ;;
    ncu)
      # One launch of the route's own plan at M = 16 and M = 128 (4096 x 4096):
      # the time by Nsight Compute and where the issue slots go.
      local_st=smsp__average_warps_issue_stalled
      metrics=gpu__time_duration.sum,smsp__inst_executed.sum,launch__registers_per_thread,launch__grid_size
      metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
      metrics+=,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
      metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed
      metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
      for stall in barrier long_scoreboard short_scoreboard math_pipe_throttle mio_throttle wait not_selected; do
        metrics+=,${local_st}_${stall}_per_issue_active.ratio
      done
      for M in 16 128; do
        run "ncu_M$M" timeout 150 ncu --clock-control none --kernel-name-base demangled -k 'regex:PrefillFused' --launch-skip 2 \
          --launch-count 2 --metrics "$metrics" "$bin/nvfp4-harness" bench --group msweep --m $M
      done ;;
    ncu7)
      # Item 7's kernels, one launch each on the shape the target names. The
      # full sections: which pipe or memory level bounds each.
      for M in 1 4 8; do
        python3 ci/device/write-inputs.py "$out/gemv_M$M.safetensors" $M 5120 25600
        run "ncu7_gemv_mma_M$M" timeout 150 ncu --clock-control none --kernel-name-base demangled -k 'regex:GemvMma' \
          --launch-count 1 --set full "$bin/nvfp4-harness" run --inputs "$out/gemv_M$M.safetensors" \
          --route gemv_mma --backend cuda
        rm -f "$out/gemv_M$M.safetensors"
      done
      python3 ci/device/write-inputs.py "$out/vec8.safetensors" 16 4096 4096
      run ncu7_prefill_vec8 timeout 150 ncu --clock-control none --kernel-name-base demangled -k 'regex:DequantChunk' \
        --launch-count 1 --set full "$bin/nvfp4-harness" run --inputs "$out/vec8.safetensors" \
        --route prefill_vec8 --backend cuda
      rm -f "$out/vec8.safetensors" ;;
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
