# Sourced by the A/B call scripts (bias-ab-call.sh, fused-ab-call.sh, cluster-sum-call.sh,
# tail-cluster-call.sh, h200-replay-call.sh, head-round-call.sh, head-replay-clocks-call.sh,
# h200-lean-call.sh, discard-parts-call.sh, balanced-ab-call.sh, streamk-proxy-call.sh,
# prepack-call.sh, prepack-round-call.sh, n256-tiles-call.sh, first-offset-call.sh, ring-steps-call.sh,
# park-or-round-call.sh, h200-or-stalls-call.sh, prepacked-only-call.sh, order-kernels-call.sh,
# path-loops-call.sh, round-or-ab-call.sh) from the
# repository root, with tag and OUT set. The
# call's card: ab_card [h200-only] unpacks $ab_bins (build/carry2/bin.tgz unless the caller set it)
# into /tmp/bin, prints the card's
# name and sets card (h200, h100, gpu); with h200-only, on any other card it ends the call. The bench half: ab_bench WHICH RUN times binary
# nvfp4-harness-WHICH's msweep rows over ab_shapes (the replay's four shapes and the sweep's three)
# at ab_ms, the rows ab_only selects, into $OUT/$card-$tag-WHICH-RUN.json, and ab_benches runs it
# base / new / new / base (a caller sets ab_ms and ab_only after sourcing to time others). The
# replay half: ab_replays [no-vec8], the 8K replay base / new / new / base and, unless no-vec8,
# once on prefill_vec8 (base);
# ab_compare, the msweep rows' old / new comparison of the bench runs base-{1,2} and new-{1,2};
# replays_and_comparison, ab_replays and then ab_compare (ab_clocks=1: each replay with the card's
# clocks). ab_sanitizers LIMIT_S [FILTER NAME]: the GPU tests FILTER selects (the cluster and tail
# tests unless given) under compute-sanitizer memcheck and racecheck, into $OUT/NAME-TOOL.log
# (NAME kernels unless given). ab_fused_tests LIMIT_S: the fused route's GPU tests into
# $OUT/tests.log. ab_tests_then_replays LIMIT_S: ab_fused_tests, then ab_replays, timed from t0
# (which it sets). The whole A/B: ab_timed_ab (benches, replays, comparison) and ab_fused_ab (the
# tests first); ab_pack_logs packs the logs at the end (each says more where it is defined).
# ab_one_binary SIDE FLAG: the A/B's two sides from one binary, /tmp/bin/nvfp4-harness (unpacked by
# ab_card): nvfp4-harness-SIDE runs it with FLAG added to its replays, the other side as it is.
ab_one_binary() {
  local other=base
  [ "$1" = base ] && other=new
  ln -sf /tmp/bin/nvfp4-harness "/tmp/bin/nvfp4-harness-$other"
  printf '#!/usr/bin/env bash\nif [ "$1" = replay ]; then exec /tmp/bin/nvfp4-harness "$@" %s; fi\nexec /tmp/bin/nvfp4-harness "$@"\n' \
    "$2" > "/tmp/bin/nvfp4-harness-$1"
  chmod +x "/tmp/bin/nvfp4-harness-$1"
}
# ab_pair BASE NEW: the A/B's two sides from binaries already in /tmp/bin (ab_card's, or a second
# archive unpacked there): nvfp4-harness-base runs /tmp/bin/BASE, nvfp4-harness-new /tmp/bin/NEW.
ab_pair() {
  ln -sf "/tmp/bin/$1" /tmp/bin/nvfp4-harness-base
  ln -sf "/tmp/bin/$2" /tmp/bin/nvfp4-harness-new
}
ab_card() {  # ab_card [h200-only]
  mkdir -p /tmp/bin && tar -xzf "${ab_bins:-build/carry2/bin.tgz}" -C /tmp/bin
  local name
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  echo "card: $name"
  case "$name" in *H200*) card=h200 ;; *H100*) card=h100 ;; *) card=gpu ;; esac
  if [ "${1:-}" = h200-only ] && [ "$card" != h200 ]; then echo "not an H200: nothing run"; exit 0; fi
}
ab_shapes=(--shape 8192x5120 --shape 5120x6144 --shape 5120x18432 --shape 36864x5120 --shape 4096x4096
  --shape 14336x4096 --shape 4096x14336)
ab_ms=(--m 128 --m 256 --m 512)
ab_only=(--only "prefill_fused bias M")
ab_bench() {  # ab_bench WHICH RUN
  timeout 140 /tmp/bin/nvfp4-harness-$1 bench --group msweep "${ab_shapes[@]}" "${ab_ms[@]}" \
    "${ab_only[@]}" --json "$OUT/$card-$tag-$1-$2.json" > "$OUT/bench-$1-$2.log" 2>&1
  echo "== bench $1 $2 rc=$?"
}
ab_benches() { ab_bench base 1; ab_bench new 1; ab_bench new 2; ab_bench base 2; }
replay() {  # replay WHICH RUN; with ab_clocks=1 the card's SM clock and power while it runs
  local monitor=
  if [ "${ab_clocks:-0}" = 1 ]; then
    nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits -lms 50 \
      > "$OUT/clocks-$1-$2.csv" 2>/dev/null &
    monitor=$!
  fi
  timeout 60 /tmp/bin/nvfp4-harness-$1 replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 \
    --chunk 256 --json "$OUT/$card-$tag-replay-$1-$2.json" > "$OUT/replay-$1-$2.log" 2>&1
  [ -n "$monitor" ] && kill "$monitor" 2>/dev/null
  python3 -c "
import json; d=json.load(open('$OUT/$card-$tag-replay-$1-$2.json')); print('replay $1 $2', round(d['total']['total_ms'],1), 'span', round(d['span_us']/1000,1), [(n['name'], round(n['total_ms'],1)) for n in d['node_types']])"
  [ -n "$monitor" ] && python3 - "$OUT/clocks-$1-$2.csv" <<'PY'
import statistics, sys
rows = [[float(x) for x in l.split(',')] for l in open(sys.argv[1]) if l.strip() and 'N/A' not in l]
busy = [r for r in rows if r[1] > 200]  # samples while the replay's kernels run (watts)
if busy:
    print('  clocks while busy: %d samples, SM MHz median %.0f min %.0f, W median %.0f max %.0f, C max %.0f' % (
        len(busy), statistics.median(r[0] for r in busy), min(r[0] for r in busy),
        statistics.median(r[1] for r in busy), max(r[1] for r in busy), max(r[2] for r in busy)))
PY
  return 0
}
ab_replays() {  # ab_replays [no-vec8]
  replay base 1; replay new 1; replay new 2; replay base 2
  [ "${1:-}" = no-vec8 ] && return 0
  timeout 60 /tmp/bin/nvfp4-harness-base replay bench/nvfp4_matmul/manifests/qwen_like_prefill.json --prompt 8192 \
    --chunk 256 --route prefill_vec8 --json "$OUT/$card-$tag-replay-vec8.json" > "$OUT/replay-vec8.log" 2>&1
  python3 -c "
import json; d=json.load(open('$OUT/$card-$tag-replay-vec8.json')); print('replay prefill_vec8', round(d['total']['total_ms'],1))"
}
# ab_fused_tests LIMIT_S: fused GPU tests, GPU = host, each route's exact bits; with ab_tests=0
# (a caller that ran them already), nothing.
ab_fused_tests() {
  [ "${ab_tests:-1}" = 0 ] && return 0
  local t0=$SECONDS
  timeout "$1" /tmp/bin/kernels_tests --gtest_filter='*Fused*cuda*:GpuAgainstHost.*:PrefillFused*:*ExactMode*' \
    > "$OUT/tests.log" 2>&1
  echo "== kernel tests rc=$? $((SECONDS - t0)) s"
  grep -E "^\[  (PASSED|FAILED) |FAILED  \]|SKIPPED  \]" "$OUT/tests.log" | head -20
}
ab_sanitizers() {  # ab_sanitizers LIMIT_S [FILTER NAME]: GPU tests under memcheck and racecheck
  local filter="${2:-*SlicesThatMeetInACluster*cuda*:*ATailSplit*cuda*}" name="${3:-kernels}"
  for tool in memcheck racecheck; do
    timeout "$1" compute-sanitizer --tool $tool --error-exitcode 9 /tmp/bin/kernels_tests \
      --gtest_filter="$filter" > "$OUT/$name-$tool.log" 2>&1
    echo "== $name $tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$OUT/$name-$tool.log"
  done
}
ab_compare() {
  python3 ci/device/bench-ab.py "$OUT/$card-$tag-base-1.json,$OUT/$card-$tag-base-2.json" \
    "$OUT/$card-$tag-new-1.json,$OUT/$card-$tag-new-2.json"
}
replays_and_comparison() { ab_replays; ab_compare; }
# ab_round_on_h200 TAG: on an H200 the call is prepack-round-call.sh TAG instead (exec); elsewhere
# nothing. Before ab_card, which unpacks the caller's binaries.
ab_round_on_h200() {
  if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    exec bash bench/nvfp4_matmul/results/prepack-round-call.sh "$1"
  fi
}
# ab_timed_ab [no-replays | no-vec8]: base / new / new / base on the bench rows ab_only and ab_ms
# select (ab_benches) and, unless no-replays, the 8K replays (ab_replays, no-vec8 passed on), then
# the rows' comparison (ab_compare).
ab_timed_ab() {
  local t0=$SECONDS
  ab_benches
  case "${1:-}" in
    no-replays) ;;
    *) ab_replays "${1:-}" ;;
  esac
  echo "== $((SECONDS - t0)) s"
  ab_compare
}
# ab_fused_ab [no-replays | no-vec8]: the new binary's fused GPU tests (ab_fused_tests), then
# ab_timed_ab.
ab_fused_ab() {
  ab_fused_tests 150
  ab_timed_ab "$@"
}
# ab_pack_logs [PATTERN...]: $OUT's *.log and the files the patterns match there (a pattern that
# matches nothing, or a path that is not there, adds nothing) into $OUT/$ab_archive (logs.tgz
# unless the caller set it), then removed (the device returns a few files a call).
ab_pack_logs() {
  (
    cd "$OUT" || exit 1
    shopt -s nullglob
    local files=(*.log) pattern file
    for pattern in "$@"; do
      for file in $pattern; do [ -e "$file" ] && files+=("$file"); done
    done
    ((${#files[@]})) && tar -czf "${ab_archive:-logs.tgz}" "${files[@]}" && rm -rf "${files[@]}"
  )
}
ab_tests_then_replays() {
  t0=$SECONDS
  ab_fused_tests "$1"
  ab_replays
  echo "== $((SECONDS - t0)) s"
}
