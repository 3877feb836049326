#!/usr/bin/perl
# Prints a kernel header as it would read without the probe feature:
# NVFP4_PROBE(cond) becomes cond and the kernels/nvfp4_matmul/probes.h include goes.
# coverage/same-code.sh compiles the result to show that probes off adds nothing.
use strict;
use warnings;

local $/;
my $text = <>;
$text =~ s{^#include "kernels/nvfp4_matmul/probes\.h"\n}{}mg;
# The macro's argument with balanced parentheses, e.g. NVFP4_PROBE(f(a) < b).
$text =~ s/NVFP4_PROBE\(((?:[^()]++|(\((?:[^()]++|(?2))*\)))*)\)/$1/g;
print $text;
