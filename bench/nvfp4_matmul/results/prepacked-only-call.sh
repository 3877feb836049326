#!/usr/bin/env bash
# Session of 2026-12-07 from 10:49 UTC: on an H200, prepack-round-call.sh on main's head (build/carry6,
# the round the targets want there). On any other card, an experiment timed: the wgmma kernels
# with the prepacked path alone compiled in (lane_words' contract-order branch taken out, timing
# only: the contract order then computes wrong bits), against main's head, base / new / new / base
# on the msweep's "prefill_fused prepacked bias" rows at M = 128, 256, 512 on ab-replays.sh's seven
# shapes, and the 8K replay (prepacked) both ways, once on prefill_vec8.
# build/carry7/bin.tgz: nvfp4-harness-base (main at 234a994) and nvfp4-harness-new (the experiment).
# Usage (device): bash bench/nvfp4_matmul/results/prepacked-only-call.sh TAG
set -uo pipefail
tag="${1:-pponly}"
cd "$(dirname "$0")/../../.."
ab_bins=build/carry6/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_round_on_h200 "$tag"
ab_bins=build/carry7/bin.tgz
ab_card
ab_only=(--only "prefill_fused prepacked bias M")
ab_timed_ab
ab_pack_logs
