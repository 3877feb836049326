#!/usr/bin/env bash
# Session of 2026-12-06 from 15:48 UTC, the call after tail-cluster-call.sh: issue 16's targets round
# (targets-round-call.sh, no crossover) on binary BIN of build/carry2/bin.tgz.
# Usage (device): bash bench/nvfp4_matmul/results/tail-cluster-targets-call.sh BIN [h200-only]
set -uo pipefail
cd "$(dirname "$0")/../../.."
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if [ "${2:-}" = h200-only ] && [[ "$name" != *H200* ]]; then echo "card: $name: not an H200, nothing run"; exit 0; fi
TARGETS_BIN="$1" TARGETS_CROSSOVER=0 bash bench/nvfp4_matmul/results/targets-round-call.sh
