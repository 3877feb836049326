#!/usr/bin/awk -f
# The one-screen summary of a tracefile and the threshold check:
#   awk -v root=$PWD -f coverage/check-thresholds.awk coverage/thresholds host.info
# Prints lines and branches per top-level folder under `root`, then for each
# folder with a threshold (coverage/thresholds) its verdict and its files
# below 100%. Exits 1 when a folder is under its threshold.
# Counts come from DA and BRDA entries (a line counts once per file; lcov has
# merged duplicates), not from the LF/BRF lines, which a filter may leave stale.
function pct(h, f) { return f ? sprintf("%5.1f%%", 100 * h / f) : "    -" }
function folder_of(path,    rel) {
  rel = substr(path, length(root) + 2)
  return index(rel, "/") ? substr(rel, 1, index(rel, "/") - 1) : "."
}
FNR == 1 { file_index++ }
file_index == 1 {  # the thresholds file
  if ($0 ~ /^[ \t]*(#|$)/) next
  want_lines[$1] = $2; want_branches[$1] = $3; nwant++; wanted[nwant] = $1
  next
}
/^SF:/ { sf = substr($0, 4); f = folder_of(sf); if (!(f in seen)) { seen[f] = 1; folders[++nf] = f }; next }
/^DA:/ {
  split(substr($0, 4), a, ","); lf[f]++; flf[sf]++
  if (a[2] > 0) { lh[f]++; flh[sf]++ }
  next
}
/^BRDA:/ {
  split(substr($0, 6), a, ","); bf[f]++; fbf[sf]++
  if (a[4] != "-" && a[4] > 0) { bh[f]++; fbh[sf]++ }
  next
}
END {
  printf "%-12s %-22s %-22s\n", "folder", "lines", "branches"
  for (i = 1; i <= nf; i++) {
    g = folders[i]
    printf "%-12s %s %6d/%-6d   %s %6d/%-6d\n", g, pct(lh[g], lf[g]), lh[g], lf[g], pct(bh[g], bf[g]), bh[g], bf[g]
  }
  status = 0
  for (w = 1; w <= nwant; w++) {
    g = wanted[w]
    lp = lf[g] ? 100 * lh[g] / lf[g] : 0
    bp = bf[g] ? 100 * bh[g] / bf[g] : 100
    ok = lp >= want_lines[g] && bp >= want_branches[g]
    if (!ok) status = 1
    printf "\n%s/: lines %.1f%% (min %s%%), branches %.1f%% (min %s%%): %s\n", g, lp, want_lines[g], bp,
           want_branches[g], ok ? "OK" : "UNDER THRESHOLD"
    n = 0
    for (s in flf) {
      if (folder_of(s) != g || (flh[s] + 0 == flf[s] && fbh[s] + 0 == fbf[s] + 0)) continue
      for (j = ++n; j > 1 && short[j - 1] > s; j--) short[j] = short[j - 1]  # insertion sort
      short[j] = s
    }
    for (j = 1; j <= n; j++) {
      s = short[j]
      printf "  %-40s lines %d/%d missed, branches %d/%d missed\n", substr(s, length(root) + 2),
             flf[s] - flh[s], flf[s], fbf[s] - fbh[s], fbf[s] + 0
    }
  }
  exit status
}
