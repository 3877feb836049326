#!/usr/bin/env bash
# Installs the Debian packages the build needs. Idempotent and quick when they
# are already there: apt-get runs only if a package is missing.
set -euo pipefail

packages=(
  cmake g++ make ninja-build pkg-config
  libgtest-dev librapidcheck-dev libssl-dev
  libboost-context-dev nlohmann-json3-dev libcli11-dev
  lcov gcovr clang-format
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#packages[@]} packages present"
fi

if [ ! -f /usr/local/cuda/include/cuda_fp4.h ] && [ -z "${CUDA_PATH:-}" ]; then
  echo "install-deps: the CUDA toolkit headers are needed (cuda_fp4.h not found in /usr/local/cuda/include;" \
       "set CUDA_PATH to the toolkit root)" >&2
  exit 1
fi
