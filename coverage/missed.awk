#!/usr/bin/awk -f
# What a tracefile says was not run in one folder, line by line with the source:
#   awk -v root=$PWD -v folder=kernels -f coverage/missed.awk host.info
# "line" = a line never executed; "branches h/n" = a decision line where only
# h of its n branches were taken (probe branches: 0 = true, 1 = false).
function flush_file(    i, j, l, text, n) {
  if (sf == "") return
  n = 0
  while ((getline text < sf) > 0) src[++n] = text
  close(sf)
  for (i = 2; i <= nlines; i++) {  # insertion sort: line order
    l = order[i]
    for (j = i - 1; j >= 1 && order[j] > l; j--) order[j + 1] = order[j]
    order[j + 1] = l
  }
  for (i = 1; i <= nlines; i++) {
    l = order[i]
    if (l in line_zero) printf "%s:%d  line not run        | %s\n", rel, l, trim(src[l])
    else if (br_total[l] > br_hit[l]) printf "%s:%d  branches %d/%d taken | %s\n", rel, l, br_hit[l], br_total[l], trim(src[l])
  }
  delete src; delete line_zero; delete br_total; delete br_hit; delete order; delete listed
  nlines = 0; sf = ""
}
function trim(s) { sub(/^[ \t]+/, "", s); return length(s) > 90 ? substr(s, 1, 87) "..." : s }
function note(l) { if (!(l in listed)) { listed[l] = 1; order[++nlines] = l } }
/^SF:/ {
  flush_file()
  path = substr($0, 4); rel = substr(path, length(root) + 2)
  if (index(rel, folder "/") == 1) sf = path
  next
}
sf == "" { next }
/^DA:/ { split(substr($0, 4), a, ","); if (a[2] == 0) { line_zero[a[1] + 0] = 1; note(a[1] + 0) } next }
/^BRDA:/ {
  split(substr($0, 6), a, ","); l = a[1] + 0
  br_total[l]++; if (a[4] != "-" && a[4] > 0) br_hit[l]++
  note(l); next
}
/^end_of_record/ { flush_file() }
END { flush_file() }
