#!/usr/bin/env bash
# Session of 2026-12-07 from 06:44 UTC: the round on main with W prepacked for prefill_fused's wgmma
# kernel (replay prepacks by default; --no-prepack reads the contract's order), on whatever card
# comes: the prepack's GPU tests; the 8K replay --no-prepack / default / default / --no-prepack and
# once on prefill_vec8 (ab-replays.sh's ab_replays, "base" being the binary with --no-prepack);
# issue 16's targets bench (the whole bench, the prepacked rows beside the others); verify on the
# GPU (the main job). build/carry6/bin.tgz holds nvfp4-harness and kernels_tests. Run on an H100 as
# tag s1207r, its files renamed h100-s1207q-* in results/ (s1207r was the stop before's tag).
# ROUND_LEAN=1: the tests and the replays alone (a call short of device time).
# ROUND_CROSSOVER="M ...": on an H200, after the round, prepack-crossover-call.sh at those M (about
# 60 s an M) in what is left of the call's ROUND_LIMIT_S (600 unless given; session of 2026-12-07
# from 13:10 UTC: H200s came seldom, so one call takes both). The tests' and replays' logs are
# packed (replays.tgz) before the targets bench, the rest after verify (logs.tgz).
# Usage (device): [ROUND_CARD=h200-only] [ROUND_LEAN=1] [ROUND_CROSSOVER="M ..." [ROUND_LIMIT_S=S]] bash bench/nvfp4_matmul/results/prepack-round-call.sh TAG
set -uo pipefail
tag="${1:-round}"
cd "$(dirname "$0")/../../.."
ab_bins=build/carry6/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card ${ROUND_CARD:-}
# new: the binary as is (prepacked); base: the same binary, its replays with --no-prepack.
ab_one_binary base --no-prepack
t0=$SECONDS
timeout 60 /tmp/bin/kernels_tests --gtest_filter='*Prepack*cuda*' > "$OUT/tests.log" 2>&1
echo "== prepack tests rc=$? $((SECONDS - t0)) s"; grep -E "^\[  (PASSED|FAILED) " "$OUT/tests.log"
ab_replays
grep -h "prepacked .* weights" "$OUT"/replay-new-*.log
echo "== $((SECONDS - t0)) s"
# Packed now, so that a call cut short later (its device time spent) still brings them back.
ab_archive=replays.tgz ab_pack_logs '*replay*.json'
[ "${ROUND_LEAN:-0}" = 1 ] && exit 0
timeout 300 /tmp/bin/nvfp4-harness-new bench --json "$OUT/$card-$tag-targets-bench.json" > "$OUT/targets-bench.log" 2>&1
echo "== targets bench rc=$? $((SECONDS - t0)) s"
timeout 100 /tmp/bin/nvfp4-harness-new verify --backend cuda --out "$OUT/verify" > "$OUT/verify.log" 2>&1
echo "== verify rc=$? $((SECONDS - t0)) s"; tail -4 "$OUT/verify.log"
ab_pack_logs verify/junit.xml
rm -rf "$OUT/verify"  # the rest of verify's folder is not brought back, as before
if [ -n "${ROUND_CROSSOVER:-}" ] && [ "$card" = h200 ]; then
  left=$((${ROUND_LIMIT_S:-600} - 30 - SECONDS))  # the call's limit, less a margin to bring the files back
  echo "== crossover at M = $ROUND_CROSSOVER in the $left s left"
  ((left > 60)) && CROSSOVER_LIMIT_S=$left bash bench/nvfp4_matmul/results/prepack-crossover-call.sh "$tag" 1 $ROUND_CROSSOVER
fi
