#!/usr/bin/env bash
# Session of 2026-12-06 from 07:17 UTC: the four A/Bs of the bias loaded before the stores, each one
# device call of this script with its VARIANT, new against main (base, 3fbf410):
#   rows      prefill_fused_sum summing up to four rows a thread, every load first, and the bias
#             before its stores (not kept: sum-rows-experiment.patch); outputs <card>-sum-rows-*
#   sum       prefill_fused_sum with the bias before its stores alone; outputs <card>-sum-bias-*
#   epilogue  that, gemv_scalar's too, and prefill_fused's mma.sync epilogue and gemv_mma's (the last
#             two not kept: epilogue-bias-experiment.patch); outputs <card>-bias-ab-*
#   landed    the change as landed (the sum and gemv_scalar), with compute-sanitizer memcheck;
#             outputs <card>-landed-ab-*
# In one call: the fused and GEMV GPU tests on the new kernels, old / new / new / old bench runs of
# prefill_fused on the replay's four shapes and the sweep's three, with and without bias (M = 64..512
# for rows and sum, 9..256 for the others), the GEMV rows of the decode group (they carry a bias),
# then the 8K replay base / new / new / base and on prefill_vec8. build/carry2/bin.tgz holds
# nvfp4-harness-base, nvfp4-harness-new and the new kernels_tests.
# Usage (device): bash bench/nvfp4_matmul/results/bias-ab-call.sh rows|sum|epilogue|landed
set -uo pipefail
variant="${1:-}"
tests='*Fused*cuda*:GpuAgainstHost.*:PrefillFused*:*GemvSlices*cuda*'
ms=(--m 64 --m 128 --m 256 --m 512)
decode=(--only "gemv_mma M"); decode_tag=gemv; memcheck=0; keep_replays=1
case "$variant" in
  rows) tag=sum-rows; keep_replays=0 ;;  # its replays' JSON stayed in OUT, as that call left them
  sum) tag=sum-bias ;;
  epilogue | landed)
    [ "$variant" = epilogue ] && tag=bias-ab || { tag=landed-ab; memcheck=1; }
    tests+=':*Gemv*cuda*:*Bias*cuda*'
    ms=(--m 9 --m 16 --m 32 --m 64 --m 128 --m 256)
    decode=(); decode_tag=decode ;;
  *) echo "usage: $0 rows|sum|epilogue|landed (variant = \"$variant\")" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../../.."
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card
timeout 200 /tmp/bin/kernels_tests --gtest_filter="$tests" > "$OUT/tests.log" 2>&1
echo "== tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/tests.log" | head
if ((memcheck)); then
  timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 /tmp/bin/kernels_tests \
    --gtest_filter='*Fused*cuda*:*GemvSlices*cuda*:*GemvScalar*cuda*' > "$OUT/memcheck.log" 2>&1
  echo "== memcheck rc=$?"; grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED) " "$OUT/memcheck.log" | head
fi
ab_ms=("${ms[@]}")
ab_only=(--only "prefill_fused bias M" --only "prefill_fused M")
ab_benches
for w in base new; do
  timeout 100 /tmp/bin/nvfp4-harness-$w bench --group decode "${decode[@]}" --json "$OUT/$card-$tag-$decode_tag-$w.json" > "$OUT/gemv-$w.log" 2>&1
  echo "== gemv $w rc=$?"
done
replays_and_comparison
python3 ci/device/bench-ab.py "$OUT/$card-$tag-$decode_tag-base.json" "$OUT/$card-$tag-$decode_tag-new.json"
if ((keep_replays)); then
  tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *replay*.json) && rm -f "$OUT"/*.log "$OUT"/*replay*.json
else
  tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log) && rm -f "$OUT"/*.log
fi
