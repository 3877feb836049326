#!/usr/bin/perl
# Filters a gcov tracefile (stdin -> stdout) down to the branches of source
# decisions: a BRDA entry stays only on a line that holds a decision
# (if, for, while, switch, case, ?:, &&, ||, a branch probe) or continues one
# (a line inside the parentheses of a statement that holds one, such as the
# condition of a for loop written over two lines). gcc's other branches come
# from code the compiler adds: the cleanup paths that destroy temporaries
# while an exception unwinds, array-destruction loops, and so on; counting
# them would measure the compiler, not the tests. lcov 2's "--filter branch"
# applies the same rule; lcov 1.16 has no such filter. BRF/BRH are recounted.
use strict;
use warnings;

my $decision = qr/\b(?:if|for|while|switch|case)\b|\?|&&|\|\||_PROBE(?:_IN)?\(/;
my %decision_lines;  # file -> { line -> 1 }

# Lines of `file` that hold or continue a decision. Strings, character
# literals and comments are blanked first so their text cannot match.
sub decision_lines {
  my ($file) = @_;
  return $decision_lines{$file} if $decision_lines{$file};
  my %lines;
  $decision_lines{$file} = \%lines;
  open(my $in, '<', $file) or return \%lines;
  my ($in_comment, @open) = (0);  # @open: for each open '(', whether its statement holds a decision
  my $n = 0;
  while (my $text = <$in>) {
    ++$n;
    if ($in_comment) {
      if ($text =~ s{^.*?\*/}{}) { $in_comment = 0 } else { next }
    }
    $text =~ s{"(?:[^"\\]|\\.)*"}{""}g;
    $text =~ s{'(?:[^'\\]|\\.)*'}{''}g;
    $text =~ s{/\*.*?\*/}{}g;
    $in_comment = 1 if $text =~ s{/\*.*$}{};
    $text =~ s{//.*$}{};
    my $here = $text =~ $decision ? 1 : 0;
    my $continues = grep { $_ } @open;
    $lines{$n} = 1 if $here || $continues;
    for my $ch ($text =~ /([()])/g) {
      if ($ch eq '(') { push @open, ($here || $continues) ? 1 : 0 } else { pop @open }
    }
  }
  return \%lines;
}

my ($file, @record);

# Prints the record, BRF/BRH recounted from the BRDA entries that stayed.
sub flush {
  my ($found, $hit, $done) = (0, 0, 0);
  for (@record) {
    next unless /^BRDA:\d+,\d+,\d+,(\S+)/;
    ++$found;
    ++$hit if $1 ne '-' && $1 > 0;
  }
  for (@record) {
    next if /^BR[FH]:/;
    if (!$done && $found && /^(?:DA:|LF:|end_of_record)/) {
      print "BRF:$found\nBRH:$hit\n";
      $done = 1;
    }
    print;
  }
  @record = ();
}

while (my $line = <STDIN>) {
  $file = $1 if $line =~ /^SF:(.*)$/;
  next if $line =~ /^BRDA:(\d+),/ && !decision_lines($file)->{$1};
  push @record, $line;
  flush() if $line =~ /^end_of_record/;
}
flush() if @record;
