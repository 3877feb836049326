#!/usr/bin/perl
# Prints a copy of lcov 1.16's geninfo (path given) with two fixes that make
# `geninfo_no_exception_branch = 1` do what it says with gcc >= 9 (gcov's JSON
# format); ci/coverage.sh runs the copy in place of `lcov --capture`.
#
# 1. Debian's lcov 1.16-1 geninfo defines the five gcov-intermediate subs
#    twice; Perl keeps the later, stale copy, whose JSON reader ignores
#    geninfo_no_exception_branch. The later copy of any sub defined twice is
#    dropped.
# 2. gcov reports each call that may throw as a two-way "branch": the normal
#    return (fallthrough) and the exception edge (throw). Dropping only the
#    throw half leaves a one-way "branch" that is taken whenever the line runs,
#    which counts in both BRF and BRH without being a decision. The
#    fallthrough edge right before a throw edge is dropped with it.
#
# Dies if geninfo does not look as expected (another lcov version): then read
# coverage/README.md, "Counting branches honestly", before changing this.
use strict;
use warnings;

my $path = shift or die "usage: geninfo-fix.pl /usr/bin/geninfo > fixed-geninfo\n";
open(my $in, '<', $path) or die "geninfo-fix: cannot read $path: $!\n";
my (%defined, $skipping, $out, $dropped);
while (my $line = <$in>) {
  # A definition (not a prototype such as "sub gen_info($);").
  if (!$skipping && $line =~ /^sub (\w+)\s*(\([^)]*\))?\s*$/) {
    if ($defined{$1}++) { $skipping = 1; $dropped++; next; }
  }
  if ($skipping) {
    $skipping = 0 if $line =~ /^}\s*$/;
    next;
  }
  $out .= $line;
}
close($in);

# Fix 2, in the JSON branch loop of intermediate_json_to_info.
my $loop = qr/for my \$b \(\@\$branches\) \{\n(\s*)my \$brcount = \$b->\{"count"\};\n\s*my \$is_exception = \$b->\{"throw"\};/;
my $fixed = <<'PERL';
for my $bi (0 .. $#$branches) {
INDENTmy $b = $branches->[$bi];
INDENTmy $brcount = $b->{"count"};
INDENT# coverage/geninfo-fix.pl: a call's normal return goes with its throw edge.
INDENTmy $next = $bi < $#$branches ? $branches->[$bi + 1] : undef;
INDENTmy $is_exception = $b->{"throw"} || ($b->{"fallthrough"} && $next && $next->{"throw"});
PERL
chomp $fixed;
my $count = () = $out =~ /$loop/g;
die "geninfo-fix: expected one JSON branch loop in $path, found $count\n" unless $count == 1;
$out =~ s/$loop/my $i = $1; (my $f = $fixed) =~ s{INDENT}{$i}g; $f/e;
my $subs = () = $out =~ /^sub intermediate_json_to_info\(/mg;
die "geninfo-fix: intermediate_json_to_info defined $subs times after the fix\n" unless $subs == 1;
print $out;
print STDERR "geninfo-fix: dropped $dropped duplicated subs\n" if $dropped && $ENV{GENINFO_FIX_VERBOSE};
