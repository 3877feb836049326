#!/usr/bin/env bash
# Session of 2026-12-07 from 10:49 UTC, the one device call its budget left room for after eight
# starts failed (366 s of device time left). On an H200: prepack-round-call.sh's lean round (the
# prepack's GPU tests and the 8K replays, item 6's) on main at 59800fd (build/carry6: the wgmma
# kernels one per order of W's codes), then the fused GPU tests of that build (ab_fused_tests).
# On any other card, most needed first: those tests, then path-loops-call.sh (the experiment of a
# stage loop per path of the decode), then order-kernels-call.sh's A/B alone (ab_tests=0: the
# contract order's rows and the 8K replays against 234a994), each part's logs packed as it ends.
# Usage (device): bash bench/nvfp4_matmul/results/round-or-ab-call.sh TAG
set -uo pipefail
tag="${1:-roundab}"
cd "$(dirname "$0")/../../.."
results=bench/nvfp4_matmul/results
fused_tests() {
  (export OUT="$OUT/tests" && mkdir -p "$OUT" && ab_bins=build/carry6/bin.tgz &&
    source $results/ab-replays.sh && ab_card && ab_fused_tests 150 && ab_pack_logs)
}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  (export OUT="$OUT/round" && mkdir -p "$OUT" && ROUND_LEAN=1 bash $results/prepack-round-call.sh "$tag")
  fused_tests
else
  fused_tests
  (export OUT="$OUT/loops" && mkdir -p "$OUT" && bash $results/path-loops-call.sh "${tag}l")
  (export OUT="$OUT/order" && mkdir -p "$OUT" && ab_tests=0 bash $results/order-kernels-call.sh "$tag")
fi
