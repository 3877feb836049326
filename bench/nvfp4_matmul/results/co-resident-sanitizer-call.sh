#!/usr/bin/env bash
# Session of 2026-12-06 from 09:11 UTC: the harness's co-resident launch tests
# (harness/co_resident_test.cc, the cooperative launch on the GPU) and the last-block tests on
# the GPU as built, then under compute-sanitizer memcheck, racecheck and synccheck.
# build/carry2/bin.tgz holds harness_exec_tests. Usage (device): bash <this>
set -uo pipefail
cd "$(dirname "$0")/../../.."
mkdir -p /tmp/bin && tar -xzf build/carry2/bin.tgz -C /tmp/bin
echo "card: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
filter='*CoResident*:*LastBlock*'
timeout 100 /tmp/bin/harness_exec_tests --gtest_filter="$filter" > "$OUT/tests.log" 2>&1
echo "== tests rc=$?"; grep -E "^\[ +(OK|PASSED|FAILED|SKIPPED) " "$OUT/tests.log" | grep -E "cuda|PASSED|FAILED"
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 /tmp/bin/harness_exec_tests \
    --gtest_filter='*CoResident*cuda*:*LastBlock*cuda*' > "$OUT/$tool.log" 2>&1
  echo "== $tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$OUT/$tool.log"
done
