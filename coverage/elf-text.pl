#!/usr/bin/perl
# Prints, for each code section (.text.*) of a 64-bit little-endian ELF such
# as a cubin, its name and a hex dump of its bytes: the machine code alone,
# without line tables or other debug sections. coverage/same-code.sh compares
# cubins with it where the SASS disassembler (cuobjdump) is not installed.
use strict;
use warnings;

my $path = shift or die "usage: elf-text.pl FILE.cubin\n";
open(my $f, '<:raw', $path) or die "elf-text: $path: $!\n";
local $/;
my $elf = <$f>;
die "elf-text: $path: not a 64-bit little-endian ELF\n" unless substr($elf, 0, 6) eq "\x7fELF\x02\x01";
my ($shoff) = unpack('Q<', substr($elf, 0x28, 8));
my ($shentsize, $shnum, $shstrndx) = unpack('v v v', substr($elf, 0x3A, 6));
my @sections = map {
  my ($name, $type, $flags, $addr, $offset, $size) = unpack('V V Q< Q< Q< Q<', substr($elf, $shoff + $_ * $shentsize, 40));
  { name => $name, offset => $offset, size => $size, type => $type }
} 0 .. $shnum - 1;
my $strtab = $sections[$shstrndx];
for my $s (@sections) {
  my $name = unpack('Z*', substr($elf, $strtab->{offset} + $s->{name}));
  next unless $name =~ /^\.text\./;
  next if $s->{type} == 8;  # SHT_NOBITS: no bytes in the file
  print "$name\n", unpack('H*', substr($elf, $s->{offset}, $s->{size})), "\n";
}
