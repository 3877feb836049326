#!/usr/bin/env bash
# Session of 2026-12-07 from 08:59 UTC: on an H200, prepack-round-call.sh on this session's binaries
# (build/carry6/bin.tgz: main with the one-tile wgmma kernel's parked offsets); on any other card,
# the prepack's GPU tests (w128n128 in one slice and in three among them, which read the parked
# offsets) under compute-sanitizer memcheck and racecheck (ab-replays.sh's ab_sanitizers).
# Usage (device): bash bench/nvfp4_matmul/results/park-or-round-call.sh TAG
set -uo pipefail
tag="${1:-park}"
cd "$(dirname "$0")/../../.."
ab_bins=build/carry6/bin.tgz
source bench/nvfp4_matmul/results/ab-replays.sh
ab_round_on_h200 "$tag"
ab_card
ab_sanitizers 240 '*Prepack*cuda*' prepack
