#!/usr/bin/env bash
# Session of 2026-12-06 from 23:32 UTC: the K split's parts dropped from the L2 unwritten once the
# sum has read them (discard.global.L2) against main's head (91b5035), on whatever card comes: the
# fused GPU tests on the variant, the 8K replay base / new / new / base and on prefill_vec8, the A/B
# rows. Ran twice: tag discard with discard-parts-experiment.patch (the discards before Y's stores;
# H200), tag discard2 with discard-after-stores-experiment.patch (after them; H100). Neither kept
# (PERF.md). build/carry3/bin.tgz held nvfp4-harness-base (the head), nvfp4-harness-new and
# kernels_tests (the variant, rebuilt before each call).
# Usage (device): bash bench/nvfp4_matmul/results/discard-parts-call.sh TAG
set -uo pipefail
tag="${1:-discard}"
cd "$(dirname "$0")/../../.."
ab_bins=build/carry3/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card
ab_tests_then_replays 150
ab_benches
ab_compare
echo "== $((SECONDS - t0)) s"
(cd "$OUT" && tar -czf logs.tgz *.log *replay*.json && tar -czf ab.tgz $card-$tag-base-*.json $card-$tag-new-*.json \
  && rm -f *.log *replay*.json $card-$tag-base-*.json $card-$tag-new-*.json)
