#!/usr/bin/env bash
# Writes OUT/index.html: the one page that links a coverage run's reports.
#   coverage/index.sh OUT TITLE
# It shows whatever of these OUT holds (ci/coverage.sh and
# ci/device-coverage.sh write them): summary.txt (gcovr's summary per folder
# and the thresholds' verdict), route_gate.txt (the route-coverage table: verify's or the test run's gate,
# shown in full), html/ (gcovr), device-html/ and merged-html/ (genhtml),
# route_gate.json, host.json, *.info tracefiles, *.txt reports.
set -euo pipefail
out=${1:?usage: coverage/index.sh OUT TITLE}
title=${2:-nvfp4-harness coverage}

escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'; }
section() {  # section HEADING FILE: the file as preformatted text, if present
  [ -f "$out/$2" ] || return 0
  printf '<h2>%s</h2>\n<p><a href="%s">%s</a></p>\n<pre>' "$1" "$2" "$2"
  escape <"$out/$2"
  printf '</pre>\n'
}
link() {  # link FILE TEXT: a list item, if the file or folder is present
  [ -e "$out/$1" ] || return 0
  printf '<li><a href="%s">%s</a> %s</li>\n' "$1" "$1" "$2"
}

{
  printf '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>%s</title>\n' "$title"
  printf '<style>body{font-family:sans-serif;margin:2em;max-width:75em}pre{background:#f4f4f4;padding:1em;overflow-x:auto}</style>\n'
  printf '</head><body>\n<h1>%s</h1>\n<p>Written %s. How to read it: coverage/README.md.</p>\n<ul>\n' \
    "$title" "$(date -u '+%Y-%m-%d %H:%M UTC')"
  link html/index.html "line, branch and decision coverage, file by file, with the source (gcovr)"
  link merged-html/index.html "host (gcov) and GPU (probes) merged (genhtml)"
  link device-html/index.html "GPU probes alone (genhtml)"
  link route_gate.json "the route-coverage gate as JSON"
  link host.json "gcovr's JSON report (the numbers of this page; gcovr -a reads it back)"
  for f in "$out"/*.info; do [ -e "$f" ] && link "$(basename "$f")" "lcov tracefile"; done
  for folder in kernels harness reference; do
    link "$folder-lines.txt" "$folder/: lines per file, the line numbers not run (gcovr)"
    link "$folder-branches.txt" "$folder/: branches per file, the lines with a branch not taken (gcovr)"
  done
  link branch-diff.txt "branches reached on the GPU and not on the host, and the reverse"
  printf '</ul>\n'
  section "Summary" summary.txt
  section "Route coverage (verify, or the gate over the test run's launches)" route_gate.txt
  section "GPU against host, by branch" branch-diff.txt
  printf '</body></html>\n'
} >"$out/index.html"
echo "wrote $out/index.html"
