#!/usr/bin/env bash
# Shows that the branch probes cost nothing when they are off (the default):
# kernels/nvfp4_matmul/launch_cuda.cu, which holds every kernel of the operator, compiles
# to the same PTX and the same cubin bytes
#   off:  this tree, NVFP4_DEVICE_PROBES off
#   none: this tree with the probe feature stripped out (coverage/strip-probes.pl:
#         NVFP4_PROBE(x) -> x, no probes.h include)
# and, as a control that the comparison can see a difference, differently
#   on:   this tree with probes on.
# No GPU needed: nvcc compiles for sm_90a (override: SAME_CODE_ARCH=100a).
# First without -lineinfo (stripping the macro moves some conditions to other
# lines, which changes the line table), comparing whole files; then with the
# presets' -lineinfo, comparing the code without the line table and debug
# strings (which name internal functions after a hash of the file's path). Exits
# non-zero when off and none differ.
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc=${CUDA_NVCC:-/usr/local/cuda/bin/nvcc}
arch=${SAME_CODE_ARCH:-90a}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The stripped tree: the same sources, kernels/nvfp4_matmul/*.cuh without probes.
mkdir -p "$work/none"
cp -r harness kernels "$work/none/"
for f in "$work"/none/kernels/nvfp4_matmul/*.cuh; do perl coverage/strip-probes.pl "$f" >"$f.tmp" && mv "$f.tmp" "$f"; done
if grep -l "NVFP4_PROBE\|probes.h" "$work"/none/kernels/nvfp4_matmul/*.cuh; then echo "same-code: strip left probes behind" >&2; exit 2; fi

# The flags of the cuda presets' kernels/nvfp4_matmul/ objects (CMake's compile command), -lineinfo aside.
flags=(-std=c++17 -O3 -DNDEBUG -DNVH_HAVE_CUDA=1 --expt-relaxed-constexpr -isystem=/usr/local/cuda/include)
compile() {  # compile NAME SOURCE_ROOT [extra flags]: NAME.ptx and NAME.cubin
  local name=$1 src=$2
  shift 2
  "$nvcc" "${flags[@]}" "$@" -I"$src" -arch=compute_${arch} -ptx "$src/kernels/nvfp4_matmul/launch_cuda.cu" -o "$work/$name.ptx"
  "$nvcc" "${flags[@]}" "$@" -I"$src" -arch=sm_${arch} -cubin "$src/kernels/nvfp4_matmul/launch_cuda.cu" -o "$work/$name.cubin"
}
compile off "$PWD"
compile none "$work/none"
compile on "$PWD" -DNVH_PROBES=1

report() {  # report A B: equal or not, PTX and cubin
  local a=$1 b=$2 ptx cubin
  # The PTX header names nothing of the source; compare it whole.
  if cmp -s "$work/$a.ptx" "$work/$b.ptx"; then ptx=identical; else ptx=DIFFERENT; fi
  if cmp -s "$work/$a.cubin" "$work/$b.cubin"; then cubin=identical; else cubin=DIFFERENT; fi
  printf '  %-4s vs %-4s  PTX %s (%s vs %s lines), cubin %s (%s vs %s bytes)\n' "$a" "$b" "$ptx" \
    "$(wc -l <"$work/$a.ptx")" "$(wc -l <"$work/$b.ptx")" "$cubin" \
    "$(wc -c <"$work/$a.cubin")" "$(wc -c <"$work/$b.cubin")"
  [ "$ptx" = identical ] && [ "$cubin" = identical ]
}
# The presets' real flags add -lineinfo: then only the line table may differ,
# so compare the PTX without .loc/.file lines and the cubins' machine code
# (their .text sections, dumped by binutils' readelf; cuobjdump is not needed).
compile off-lineinfo "$PWD" -lineinfo
compile none-lineinfo "$work/none" -lineinfo
code_only() {  # code_only NAME: PTX minus line directives and debug sections, then the code sections
  sed -n '/^[[:space:]]*\.section[[:space:]]*\.debug/q;p' "$work/$1.ptx" | grep -v -E '^\s*\.(loc|file)\b'
  elf_code "$work/$1.cubin"
}
elf_code() {  # elf_code CUBIN: a hex dump of each code section (.text.*), no line tables or debug sections
  local sections
  sections=$(readelf -S -W "$1" 2>/dev/null | sed -n 's/^ *\[ *[0-9]*\] \(\.text\.[^ ]*\) .*/\1/p')
  [ -n "$sections" ] || { echo "same-code: readelf found no code section in $1" >&2; exit 2; }
  # readelf warns about the cubin's machine-specific section flags; the dump is unaffected.
  for s in $sections; do readelf -x "$s" "$1" 2>/dev/null; done
}

echo "same-code: kernels/nvfp4_matmul/launch_cuda.cu for sm_${arch}"
same=0
report off none || same=1
# Into files, not <(...): a dump that fails then stops the script instead of comparing empty to empty.
code_only off-lineinfo >"$work/off.code"
code_only none-lineinfo >"$work/none.code"
if cmp -s "$work/off.code" "$work/none.code"; then
  echo "  off  vs none  with -lineinfo: PTX and machine code identical (the line tables differ: lines moved)"
else
  echo "  off  vs none  with -lineinfo: code DIFFERENT" >&2
  same=1
fi
report off on && { echo "same-code: probes on compiled to the same code: the comparison proves nothing" >&2; exit 2; }
if [ "$same" = 0 ]; then
  echo "same-code: OK, probes off is byte for byte the build without the probe feature"
else
  echo "same-code: probes off changed the code" >&2
  diff "$work/off.ptx" "$work/none.ptx" | head -n 40 >&2
fi
exit "$same"
