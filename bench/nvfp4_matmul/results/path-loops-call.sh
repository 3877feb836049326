#!/usr/bin/env bash
# Session of 2026-12-07 from 10:49 UTC: an experiment timed on any card: the wgmma kernels with a
# stage loop per path of the decode (the fast path's and the contract's, each compiled with its
# path alone, a uniform branch on g apart before the loop), where one loop held both paths' decode
# a uniform branch apart inside each stage; same bits. Against main with a kernel per order of W's
# codes (59800fd): base / new / new / base on the msweep's "prefill_fused prepacked bias" rows at
# M = 128, 256, 512 on ab-replays.sh's seven shapes, and the 8K replay (prepacked, g = 1/64: the
# fast path) both ways. Base: build/carry6's nvfp4-harness (59800fd); new: build/carry7's
# nvfp4-harness-twoloops. Usage (device): bash bench/nvfp4_matmul/results/path-loops-call.sh TAG
set -uo pipefail
tag="${1:-loops}"
cd "$(dirname "$0")/../../.."
ab_bins=build/carry6/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card
tar -xzf build/carry7/bin.tgz -C /tmp/bin
ab_pair nvfp4-harness nvfp4-harness-twoloops
ab_only=(--only "prefill_fused prepacked bias M")
ab_timed_ab no-vec8
ab_pack_logs '*replay*.json'
