#!/usr/bin/env bash
# Session of 2026-12-07 from 08:59 UTC: the wgmma kernels' per-stage bookkeeping cut down: the ring's
# slots step with the stages (read, fill) in place of s % kStages on a 64-bit s, and each thread's
# scale copy address made once a tile (ScaleShare) in place of from p, the tile and the stage every
# stage (SASS: about 44 fewer instructions a stage). On an H200 first the lean round of main's head
# (prepack-round-call.sh with ROUND_LEAN=1, build/carry6: the tests and the 8K replays, items 6's),
# then, on any card: the new binary's fused GPU tests (GPU = host, the prepack's), base / new / new /
# base on the msweep's "prefill_fused prepacked bias" rows at M = 128, 256, 512 on ab-replays.sh's
# seven shapes and the 8K replay (prepacked, both), once on prefill_vec8.
# build/carry9/bin.tgz: nvfp4-harness-base (main at 73fe35e, build/carry6's), nvfp4-harness-new and
# kernels_tests (this change). Usage (device): bash bench/nvfp4_matmul/results/ring-steps-call.sh TAG
set -uo pipefail
tag="${1:-ring}"
cd "$(dirname "$0")/../../.."
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  (export OUT="$OUT/round" && mkdir -p "$OUT" && ROUND_LEAN=1 bash bench/nvfp4_matmul/results/prepack-round-call.sh "$tag-head")
fi
ab_bins=build/carry9/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card
ab_only=(--only "prefill_fused prepacked bias M")
ab_fused_ab
