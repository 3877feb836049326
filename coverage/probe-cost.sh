#!/usr/bin/env bash
# What the branch probes cost on the GPU, for the H200 run (coverage/README.md):
#   coverage/probe-cost.sh OFF_BUILD ON_BUILD [REPEATS]
# OFF_BUILD: a CUDA build without probes (preset cuda-sm90); ON_BUILD: the same
# with probes (preset cuda-probes). For each build, REPEATS times (default 3):
#   verify --backend cuda   the whole GPU suite, wall time
#   bench --group decode --group prefill   the kernels alone, median per case
# then the per-case ratio ON/OFF. With probes off the kernels are the same
# bytes as without the feature (coverage/same-code.sh), so OFF_BUILD is also
# the timing of a build that never had probes.
set -euo pipefail
cd "$(dirname "$0")/.."
off=${1:?usage: coverage/probe-cost.sh OFF_BUILD ON_BUILD [REPEATS]}
on=${2:?usage: coverage/probe-cost.sh OFF_BUILD ON_BUILD [REPEATS]}
repeats=${3:-3}
out=${NVFP4_PROBE_COST_OUT:-out/probe-cost}
mkdir -p "$out"

for build in "$off" "$on"; do
  name=$(basename "$build")
  for i in $(seq "$repeats"); do
    t0=$(date +%s%N)
    "$build/nvfp4-harness" verify --backend cuda --out "$out/verify-$name" >"$out/verify-$name-$i.txt" 2>&1 || true
    ms=$((($(date +%s%N) - t0) / 1000000))
    echo "$name verify $i: $((ms / 1000)).$(printf %03d $((ms % 1000))) s ($(grep '^summary:' "$out/verify-$name-$i.txt"))"
  done
  "$build/nvfp4-harness" bench --group decode --group prefill --json "$out/bench-$name.json" >"$out/bench-$name.txt" 2>&1
done

# Kernel medians side by side (bench's JSON: rows with group, name, median_us).
perl -MJSON::PP -e '
  my ($a, $b) = map { local $/; open my $f, "<", $_ or die "$_: $!"; decode_json(<$f>) } @ARGV;
  my %off = map { ("$_->{group}/$_->{name}" => $_->{median_us}) } @{$a->{rows}};
  printf "%-44s %10s %10s %7s\n", "case", "off us", "on us", "on/off";
  for my $r (@{$b->{rows}}) {
    my $k = "$r->{group}/$r->{name}";
    next unless $off{$k};
    printf "%-44s %10.2f %10.2f %7.2f\n", $k, $off{$k}, $r->{median_us}, $r->{median_us} / $off{$k};
  }' "$out/bench-$(basename "$off").json" "$out/bench-$(basename "$on").json" | tee "$out/kernels.txt"
