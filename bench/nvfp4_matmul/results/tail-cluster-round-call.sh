#!/usr/bin/env bash
# Session of 2026-12-06 from 15:48 UTC, the call on the landed code: tail-cluster-call.sh (tests, the
# tail's variants, the A/B rows and replays against main) on whatever card comes, then on an H200
# tail-cluster-targets-call.sh (issue 16's targets round on nvfp4-harness-new, the sanitizers).
# Usage (device): bash bench/nvfp4_matmul/results/tail-cluster-round-call.sh TAG
set -uo pipefail
cd "$(dirname "$0")/../../.."
bash bench/nvfp4_matmul/results/tail-cluster-call.sh "${1:-tailcluster2}"
# At most 8 files come back: the A/B's in one archive.
(cd "$OUT" && tar -czf ab.tgz *.json logs.tgz && rm -f *.json logs.tgz)
bash bench/nvfp4_matmul/results/tail-cluster-targets-call.sh nvfp4-harness-new h200-only
