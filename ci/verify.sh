#!/usr/bin/env bash
# The main job of README.md: installs what is missing, builds, and runs
# `nvfp4-harness verify` on the best backend here: the GPU when one answers
# (cuda preset), else the host executor (host preset). Extra arguments go to
# verify (e.g. --family decode --cases 100).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-deps.sh
preset=host
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU' \
   && [ -x /usr/local/cuda/bin/nvcc ]; then
  preset=cuda
fi
echo "verify: building the $preset preset"
bash ci/build.sh "$preset" nvfp4-harness
exec "build/$preset/nvfp4-harness" verify "$@"
