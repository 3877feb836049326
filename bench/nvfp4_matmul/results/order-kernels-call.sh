#!/usr/bin/env bash
# Session of 2026-12-07 from 10:49 UTC: the wgmma kernels built one per order of W's codes
# (kPrepacked: the prepacked and the contract's order each a kernel, where one kernel held both
# orders' loads a uniform branch apart). On an H200, prepack-round-call.sh on this build
# (build/carry6: nvfp4-harness and kernels_tests of the change). On any other card: the fused GPU
# tests of the change (GPU = host, the prepack's own; ab_fused_tests), then base / new / new / base
# on the msweep's "prefill_fused bias" rows (W in the contract's order) at M = 128, 256, 512 on
# ab-replays.sh's seven shapes, and the 8K replay (prepacked) both ways, once on prefill_vec8.
# build/carry7/bin.tgz holds nvfp4-harness-234a994 (main before the change), the base here; new is
# build/carry6's nvfp4-harness.
# Usage (device): bash bench/nvfp4_matmul/results/order-kernels-call.sh TAG
set -uo pipefail
tag="${1:-order}"
cd "$(dirname "$0")/../../.."
ab_bins=build/carry6/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_round_on_h200 "$tag"
ab_card
tar -xzf build/carry7/bin.tgz -C /tmp/bin
ab_pair nvfp4-harness-234a994 nvfp4-harness
ab_only=(--only "prefill_fused bias M")
ab_fused_ab
ab_pack_logs '*replay*.json'
