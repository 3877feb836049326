#!/usr/bin/env bash
# On a machine with two GPUs: verify as one run on GPU 0 and as two shards,
# one pinned to each GPU, merged; their manifests compared; wall time of each
# (README "Scale-out"). Then the GPU test suites through ctest, over one GPU
# and over both (ci/device/gpu-ctest.sh). Logs and times go to OUT.
# Usage: ci/device/two-gpus.sh BIN [verify|verify10|ctest ...]
#   verify: the default case count; verify10: ten times it (--cases 2000)
set -uo pipefail
bin=$1; shift
out=${OUT:-out/two-gpus}
mkdir -p "$out"
status=0
timed() {  # timed NAME CMD...: the command's output to $out/NAME.log, its wall time printed
  local name=$1; shift
  local t0=$(date +%s.%N)
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '=== %s: rc=%d, %.1f s\n' "$name" "$rc" "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { print a - b }')"
  grep -h "summary:\|manifests agree\|matching digests\|differ" "$out/$name.log" | head -3
  ((rc == 0)) || status=1
}
verify_both() {  # verify_both TAG [verify options...]
  local tag=$1; shift
  timed "${tag}_one_gpu" env CUDA_VISIBLE_DEVICES=0 "$bin/nvfp4-harness" verify --backend cuda --seed 7 "$@" --out "$out/$tag/one"
  local t0=$(date +%s.%N)
  for i in 0 1; do
    CUDA_VISIBLE_DEVICES=$i "$bin/nvfp4-harness" verify --backend cuda --seed 7 "$@" --shard $i/2 \
      --out "$out/$tag/shard$i" >"$out/${tag}_shard$i.log" 2>&1 &
  done
  wait
  printf '=== %s_two_gpus (two shards in parallel): %.1f s\n' "$tag" "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { print a - b }')"
  grep -h "summary:" "$out/${tag}_shard0.log" "$out/${tag}_shard1.log"
  timed "${tag}_merge" "$bin/nvfp4-harness" merge --out "$out/$tag/merged" "$out/$tag/shard0" "$out/$tag/shard1"
  timed "${tag}_compare" "$bin/nvfp4-harness" compare "$out/$tag/one/manifest.json" "$out/$tag/merged/manifest.json"
}
nvidia-smi -L
for step in "$@"; do
  case $step in
    verify) verify_both default ;;
    verify10) verify_both tenfold --cases 2000 ;;
    ctest)
      timed ctest_one_gpu bash ci/device/gpu-ctest.sh "$bin" "$out/ctest1" ci/device/resources-1gpu.json -j 8
      tail -3 "$out/ctest_one_gpu.log"
      timed ctest_two_gpus bash ci/device/gpu-ctest.sh "$bin" "$out/ctest2" ci/device/resources-2gpu.json -j 8
      tail -3 "$out/ctest_two_gpus.log" ;;
  esac
done
exit $status
