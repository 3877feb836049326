#!/usr/bin/awk -f
# Which branches one tracefile reached and another did not, both ways:
#   awk -v a_name=GPU -v b_name=host -v root=$PWD -f coverage/brda-diff.awk A.info B.info
# A branch is a BRDA entry (file, line, block, branch); it is reached when its
# count is a number > 0. Compare like with like: two probe tracefiles (probe
# branches are block 9000, branch 0 = condition true, 1 = false), or two gcov
# ones; gcov numbers a line's branches differently, so a probe entry never
# matches a gcov entry. Files are matched by their path under `root` when it
# is given (strip that prefix), else by the full SF path. Prints each branch
# with both counts and the source line, and a count per direction.
function rel(path) { return (root != "" && index(path, root "/") == 1) ? substr(path, length(root) + 2) : path }
function reached(c) { return c != "-" && c + 0 > 0 }
function what(block, branch) {
  if (block == 9000) return branch == 0 ? "true " : "false"
  return "block " block " branch " branch
}
function source_line(path, line,    text, n) {
  if (!(path in loaded)) {
    loaded[path] = 1; n = 0
    while ((getline text < path) > 0) src[path, ++n] = text
    close(path)
  }
  text = src[path, line]
  sub(/^[ \t]+/, "", text)
  return length(text) > 80 ? substr(text, 1, 77) "..." : text
}
FNR == 1 { side++ }
/^SF:/ { sf = substr($0, 4); file = rel(sf); path[file] = sf; next }
/^BRDA:/ {
  split(substr($0, 6), f, ",")
  key = file SUBSEP f[1] SUBSEP f[2] SUBSEP f[3]
  if (!(key in known)) { known[key] = 1; keys[++nkeys] = key }
  if (!((side, key) in count)) count[side, key] = 0
  if (reached(f[4])) count[side, key] += f[4]
  next
}
function report(x, y, xname, yname,    i, k, p, n) {
  n = 0
  printf "%s reached, %s did not:\n", xname, yname
  for (i = 1; i <= nkeys; i++) {
    k = keys[i]
    if (count[x, k] > 0 && !(count[y, k] > 0)) {
      split(k, p, SUBSEP)
      printf "  %s:%d %s  %s %d, %s %s  | %s\n", p[1], p[2], what(p[3], p[4]), xname, count[x, k], yname,
             ((y, k) in count) ? "0" : "absent", source_line(path[p[1]], p[2])
      n++
    }
  }
  if (n == 0) print "  (none)"
  return n
}
END {
  if (a_name == "") a_name = ARGV[1]
  if (b_name == "") b_name = ARGV[2]
  only_a = report(1, 2, a_name, b_name)
  print ""
  only_b = report(2, 1, b_name, a_name)
  both = 0
  for (i = 1; i <= nkeys; i++) if (count[1, keys[i]] > 0 && count[2, keys[i]] > 0) both++
  printf "\nbranches reached by both: %d; only by %s: %d; only by %s: %d\n", both, a_name, only_a, b_name, only_b
}
