#!/usr/bin/env bash
# Host coverage (coverage/README.md): builds the `coverage` preset (Debug,
# gcov), runs its ctest, and hands the counts to gcovr, which keeps the
# project's own sources (kernels/nvfp4_matmul/, harness/, reference/nvfp4_matmul/: no tests, /usr or
# build folders), counts decision branches only, writes the text, HTML and
# JSON reports, and checks each folder of coverage/thresholds. Prints a
# one-screen summary next to the route table (verify's, or the test run's gate). Everything lands in
# out/coverage/ (open index.html).
# Exits non-zero when a test fails or a folder is under its threshold.
#   NVFP4_COVERAGE_OUT    output folder (default out/coverage)
#   NVFP4_VERIFY_BUILD    build whose `nvfp4-harness verify` prints the route table
#                         (default build/host; without it, the gate over the test run's route log)
#   NVFP4_COVERAGE_TESTED 1: the coverage build was just built and tested
#                         (CI: NVFP4_PRESET=coverage bash ci/test.sh); report its counts
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=build/coverage  # the coverage preset's (ci/test.sh builds and tests it)
out=$(realpath -m "${NVFP4_COVERAGE_OUT:-out/coverage}")
jobs=$(nproc)
start=$(date +%s)
step() { echo "== coverage: $* ($(($(date +%s) - start)) s)"; }

bash ci/install-deps.sh >/dev/null
rm -rf "$out"
mkdir -p "$out/html"
tests=0
if [ "${NVFP4_COVERAGE_TESTED:-0}" = 1 ]; then
  # CI: the README's test command just built this preset and ran every test
  # (NVFP4_PRESET=coverage bash ci/test.sh); its counts are the ones reported.
  step "using the counts of the test run just made in $build"
  [ -f "$build/build.ninja" ] || { echo "coverage: NVFP4_COVERAGE_TESTED=1 but $build is not built" >&2; exit 2; }
  echo "ctest ran before this step (NVFP4_PRESET=coverage bash ci/test.sh); its output is in CI's log" >"$out/ctest.log"
else
  step "building the coverage preset in $build and running ctest"
  NVFP4_PRESET=coverage bash ci/test.sh --output-on-failure >"$out/ctest.log" 2>&1 || tests=$?
  grep -E "tests passed|tests failed|Total Test time" "$out/ctest.log" || true
fi

step "capturing and rendering (gcovr -j $jobs)"
# The project's own sources, not its tests (coverage/README.md, "What is counted").
sources=(--root "$root" --filter "$root/kernels/" --filter "$root/harness/" --filter "$root/reference/"
         --exclude '.*_test\.cc$' --exclude '.*/test_util\.h$')
# Decision branches only (coverage/README.md, "Counting branches"): no
# exception edges, none on a line without code, and none on a line without a
# decision: gcovr drops the branches of a line this pattern matches, a line
# whose code (outside comments and string or character literals) holds no
# if, for, while, switch, case, ?:, && or || and no branch probe.
not_a_decision=$(cat coverage/not-a-decision.re)
# gcov writes its .gcov files into the current folder: the build folder, not the sources.
(cd "$build" && gcovr "${sources[@]}" -j "$jobs" \
  --exclude-throw-branches --exclude-unreachable-branches \
  --exclude-branches-by-pattern "$not_a_decision" --decisions \
  --json "$out/host.json" \
  --html-details "$out/html/index.html" --html-title "nvfp4-harness host coverage (gcov, decision branches)" \
  --html-high-threshold 95 --html-medium-threshold 90 \
  .) >"$out/gcovr.log" 2>&1 || { cat "$out/gcovr.log" >&2; exit 1; }
# An lcov tracefile of the same counts, for ci/device-coverage.sh's merge with
# the GPU probes' tracefile.
python3 coverage/gcovr-json-to-lcov.py "$out/host.json" "$root" >"$out/host.info"
# The converter is written by hand: its tracefile must count what gcovr counts.
counts='s/^ *\(lines\|branches\)[.]*: [0-9.]*% (\([0-9]*\) \(out \)\?of \([0-9]*\).*/\1 \2 \4/p'
gcovr_counts=$(gcovr -a "$out/host.json" --root "$root" -s --txt /dev/null | sed -n "$counts")
lcov_counts=$(lcov --config-file coverage/lcovrc --summary "$out/host.info" 2>&1 | sed -n "$counts")
if [ "$gcovr_counts" != "$lcov_counts" ] || [ -z "$gcovr_counts" ]; then
  echo "coverage: host.info counts [$lcov_counts], gcovr counts [$gcovr_counts]" >&2
  exit 1
fi

# The route table of the same source. With a host preset build (a developer's
# machine): verify on it, seconds at -O2. Without one (CI): the gate over the
# launches the test run above logged, so the table is of the very run whose
# counts this report holds (verify on the gcov build takes 4 minutes).
verify_build=${NVFP4_VERIFY_BUILD:-build/host}
verify=0
if [ -x "$verify_build/nvfp4-harness" ]; then
  step "route table (nvfp4-harness verify, $verify_build)"
  "$verify_build/nvfp4-harness" verify --backend host --out "$out/verify" >"$out/verify.txt" 2>&1 || verify=$?
  cp "$out/verify/route_gate.txt" "$out/verify/route_gate.json" "$out/" 2>/dev/null || true
  route_summary="verify exit $verify: $(grep '^summary:' "$out/verify.txt" || echo 'no summary')"
else
  step "route table (nvfp4-harness gate over the test run's route log)"
  "$build/nvfp4-harness" gate --backend host "$build/route-logs/tests.jsonl" >"$out/route_gate.txt" 2>&1 || verify=$?
  route_summary="the test run's launches, gate exit $verify: $(head -n 1 "$out/route_gate.txt")"
fi

# Per folder, from the report above (no gcov run): its summary, its files
# (lines and branches not run) and, for a folder in coverage/thresholds,
# gcovr's own verdict (--fail-under-*: exit 2 lines, 4 branches, 6 both).
thresholds=0
folder_report() {  # folder_report FOLDER [MIN_LINES MIN_BRANCHES]
  local folder=$1 status=0 limits=()
  [ $# -eq 3 ] && limits=(--fail-under-line "$2" --fail-under-branch "$3")
  echo "$folder/:"
  gcovr -a "$out/host.json" --root "$root" --filter "$root/$folder/" -s -u \
    --txt "$out/$folder-lines.txt" "${limits[@]}" 2>&1 | sed 's/^/  /' || status=$?
  gcovr -a "$out/host.json" --root "$root" --filter "$root/$folder/" -b -u --txt "$out/$folder-branches.txt"
  if [ $# -eq 3 ]; then
    if [ "$status" = 0 ]; then echo "  threshold: lines >= $2 %, branches >= $3 %: OK"
    else echo "  threshold: lines >= $2 %, branches >= $3 %: UNDER THRESHOLD (gcovr exit $status)"; thresholds=1; fi
  fi
}
{
  echo "host coverage, gcov, decision branches ($(git rev-parse --short HEAD 2>/dev/null || echo unknown)):"
  declare -A min_lines min_branches
  folders=(kernels harness reference)
  while read -r folder lines branches; do
    [[ -z "$folder" || "$folder" == \#* ]] && continue
    min_lines[$folder]=$lines min_branches[$folder]=$branches
    # A threshold for a folder gcovr does not keep: judged, and failed (no lines).
    [[ " ${folders[*]} " == *" $folder "* ]] || folders+=("$folder")
  done <coverage/thresholds
  for folder in "${folders[@]}"; do
    if [ -n "${min_lines[$folder]:-}" ]; then folder_report "$folder" "${min_lines[$folder]}" "${min_branches[$folder]}"
    else folder_report "$folder"; fi
  done
  echo
  echo "route coverage ($route_summary)"
} >"$out/summary.txt"
cat "$out/summary.txt"
echo
cat "$out/route_gate.txt" 2>/dev/null || tail -n 20 "$out/verify.txt" 2>/dev/null || true
bash coverage/index.sh "$out" "nvfp4-harness host coverage" >/dev/null
step "done: open $out/index.html"

[ "$tests" = 0 ] || { echo "coverage: ctest failed (exit $tests), see $out/ctest.log" >&2; exit 1; }
[ "$thresholds" = 0 ] || { echo "coverage: under threshold, see $out/summary.txt and its folder's *-lines.txt, *-branches.txt" >&2; exit 1; }
