#!/usr/bin/env bash
# ctest over prebuilt GPU test binaries without their build tree (the stripped
# binaries carried to the GPU machine): writes a CTest folder with one test per
# GoogleTest case of each binary, every one asking for one GPU
# (RESOURCE_GROUPS "gpus:1", as the CUDA presets' tests do), then runs ctest
# with the given resource spec, so the tests spread over the GPUs it lists
# (each test's backend takes the GPU ctest gave it: nvh::default_cuda_device()).
# A gtest SKIP reads as Skipped, never Passed.
# Usage: ci/device/gpu-ctest.sh BIN_DIR TEST_DIR SPEC_FILE [ctest options...]
#   e.g. ci/device/gpu-ctest.sh .gpu out/ctest2 ci/device/resources-2gpu.json -j 8
set -euo pipefail
bin=$(cd "$1" && pwd); dir=$2; spec=$(cd "$(dirname "$3")" && pwd)/$(basename "$3"); shift 3
rm -rf "$dir"; mkdir -p "$dir"
file="$dir/CTestTestfile.cmake"
count=0
for name in harness_exec_tests harness_suite_tests kernels_tests property_tests cli_tests; do
  [ -x "$bin/$name" ] || continue
  suite=""
  while IFS= read -r line; do
    if [[ "$line" =~ ^([^[:space:]#]+\.) ]]; then suite=${BASH_REMATCH[1]}; continue; fi
    [[ "$line" =~ ^[[:space:]]+([^[:space:]#]+) ]] || continue
    test="$suite${BASH_REMATCH[1]}"
    printf 'add_test([=[%s]=] "%s" [=[--gtest_filter=%s]=])\n' "$test" "$bin/$name" "$test" >>"$file"
    printf 'set_tests_properties([=[%s]=] PROPERTIES RESOURCE_GROUPS "gpus:1" SKIP_REGULAR_EXPRESSION "\\\\[  SKIPPED \\\\]")\n' "$test" >>"$file"
    count=$((count + 1))
  done < <("$bin/$name" --gtest_list_tests)
done
echo "gpu-ctest: $count tests from $bin, resource spec $spec"
ctest --test-dir "$dir" --resource-spec-file "$spec" "$@"
