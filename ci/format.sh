#!/usr/bin/env bash
# The C++/CUDA sources against the project's .clang-format (clang-format from
# Debian 12: 14.0.6). `bash ci/format.sh` reformats the sources in place;
# `bash ci/format.sh --check` (CI) changes nothing and exits non-zero naming
# every file that differs. Sources: git's tracked files and the untracked
# ones it does not ignore, so a new file is checked before its `git add`.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends clang-format
fi
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cc' '*.h' '*.cu' '*.cuh')
if [ "${1:-}" = --check ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if ((${#bad[@]})); then
    echo "format: ${#bad[@]} of ${#files[@]} files differ from .clang-format (run: bash ci/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: all ${#files[@]} C++/CUDA files match .clang-format ($(clang-format --version))"
else
  clang-format -i "${files[@]}"
fi
