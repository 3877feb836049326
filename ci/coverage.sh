#!/usr/bin/env bash
# Host coverage (coverage/README.md): builds the `coverage` preset (Debug,
# gcov), runs its ctest, captures line and branch counts with lcov, keeps the
# project's own sources (kernels/, harness/, reference/: no tests, /usr or
# build folders), counts decision branches only, renders HTML, prints a
# one-screen summary next to verify's route table, and enforces
# coverage/thresholds. Everything lands in out/coverage/ (open index.html).
# Exits non-zero when a test fails or a folder is under its threshold.
#   NVFP4_COVERAGE_BUILD  build folder (default build/coverage, the preset's)
#   NVFP4_COVERAGE_OUT    output folder (default out/coverage)
#   NVFP4_VERIFY_BUILD    host build whose nvfp4-harness prints the route table
#                         (default build/host, the host preset's, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${NVFP4_COVERAGE_BUILD:-build/coverage}
out=${NVFP4_COVERAGE_OUT:-out/coverage}
rc=(--config-file "$root/coverage/lcovrc" --quiet)
jobs=$(nproc)
start=$(date +%s)
step() { echo "== coverage: $* ($(($(date +%s) - start)) s)"; }

bash ci/install-deps.sh >/dev/null
step "building the coverage preset in $build"
cmake --preset coverage -B "$build" >/dev/null
cmake --build "$build" -j "$jobs" >/dev/null

step "running ctest"
find "$build" -name '*.gcda' -delete  # this run's counts only
rm -rf "$out"
mkdir -p "$out"
tests=0
# One host-executor thread per test: gcov's counters are atomic
# (-fprofile-update=atomic), and threads of one test updating the same
# counters run 2.3x slower than one thread (ModelPrefill: 237 s against 105 s
# on 2 cores); ctest -j keeps the cores busy. The executor's own threading
# is still covered: host_executor_test.cc sets its thread count itself.
NVFP4_HOST_THREADS=1 ctest --test-dir "$build" -j "$jobs" --output-on-failure >"$out/ctest.log" 2>&1 || tests=$?
grep -E "tests passed|tests failed|Total Test time" "$out/ctest.log" || true

step "capturing"
# lcov --capture is geninfo; a fixed copy counts exception branches out (coverage/geninfo-fix.pl).
perl coverage/geninfo-fix.pl "$(command -v geninfo)" >"$build/geninfo-fixed"
perl "$build/geninfo-fixed" "${rc[@]}" --no-external --base-directory "$root" "$build" -o "$out/all.info"
lcov "${rc[@]}" --extract "$out/all.info" "$root/kernels/*" "$root/harness/*" "$root/reference/*" -o "$out/project.info"
lcov "${rc[@]}" --remove "$out/project.info" '*_test.cc' '*/test_util.h' -o "$out/host-all-branches.info"
perl coverage/decision-branches.pl <"$out/host-all-branches.info" >"$out/host.info"
rm -f "$out/all.info" "$out/project.info"

step "rendering"
genhtml "${rc[@]}" --prefix "$root" --title "nvfp4-harness host coverage (gcov, decision branches)" \
  -o "$out/html" "$out/host.info"
awk -v root="$root" -v folder=kernels -f coverage/missed.awk "$out/host.info" >"$out/kernels-missed.txt"

# The route table of the same source: verify on the host preset (built by
# ci/test.sh; seconds there, minutes under gcov and -O0).
step "route table (nvfp4-harness verify, host preset)"
verify_build=${NVFP4_VERIFY_BUILD:-build/host}
[ -x "$verify_build/nvfp4-harness" ] || bash ci/build.sh host nvfp4-harness >/dev/null
verify=0
"$verify_build/nvfp4-harness" verify --backend host --out "$out/verify" >"$out/verify.txt" 2>&1 || verify=$?
cp "$out/verify/route_gate.txt" "$out/verify/route_gate.json" "$out/" 2>/dev/null || true

thresholds=0
{
  echo "host coverage, gcov, decision branches ($(git rev-parse --short HEAD 2>/dev/null || echo unknown)):"
  awk -v root="$root" -f coverage/check-thresholds.awk coverage/thresholds "$out/host.info" || thresholds=$?
  echo
  echo "route coverage (verify exit $verify): $(grep '^summary:' "$out/verify.txt" || echo 'no summary')"
} >"$out/summary.txt"
cat "$out/summary.txt"
echo
cat "$out/route_gate.txt" 2>/dev/null || tail -n 20 "$out/verify.txt"
bash coverage/index.sh "$out" "nvfp4-harness host coverage" >/dev/null
step "done: open $out/index.html"

[ "$tests" = 0 ] || { echo "coverage: ctest failed (exit $tests), see $out/ctest.log" >&2; exit 1; }
[ "$thresholds" = 0 ] || { echo "coverage: under threshold, see $out/kernels-missed.txt" >&2; exit 1; }
