#!/usr/bin/env bash
# Session of 2026-12-06 from 15:48 UTC, the last device minutes: on an H200 only (elsewhere nothing),
# item 6's replay, base (main at 64e7bff) / new / new / base and on prefill_vec8, the 8K prompt in
# chunks of 256 (ab-replays.sh's ab_replays). build/carry2/bin.tgz holds nvfp4-harness-base and nvfp4-harness-new.
# Usage (device): bash bench/nvfp4_matmul/results/h200-replay-call.sh TAG
set -uo pipefail
tag="${1:-replay}"
cd "$(dirname "$0")/../../.."
source bench/nvfp4_matmul/results/ab-replays.sh
ab_card h200-only
ab_replays
tar -czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.json) && rm -f "$OUT"/*.log "$OUT"/*.json
