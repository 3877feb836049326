"""A sampled mutation run over the lines a change added to one file (harness/host_executor.cc
unless FILE names another), judged by the test binary of the file's folder: harness_exec_tests
for harness/ (the host executor's own tests: its rules, each broken once), kernels_tests for
kernels/nvfp4_matmul/ (the operator's kernel tests, whole, on the host executor).

mutation.py mutates kernels/nvfp4_matmul/ and judges with the operator's test binaries; the
harness's executor is judged by none of them. This driver takes mutation.py's generator
(universalmutator's rules, ignore.txt, string-only changes dropped), keeps the mutants on the lines
`git diff BASE NEW -- FILE` added (no identifier renames), samples them with a
seed, and judges each in a scratch copy of the tree: rebuilt with ninja (a build error: invalid),
then every case of the judge (a failure or a run past 120 s: killed; all pass: survived).
Hand-written: no tool judges a file with a test binary of our choosing.

Usage: python3 ci/mutation/harness-run/run.py SCRATCH_SRC SCRATCH_BUILD BASE NEW SEED COUNT OUT.json
                                                 [FILE]
  SCRATCH_SRC    a copy of the tree (git archive), never the work tree
  SCRATCH_BUILD  a host-preset build of it (cmake -G Ninja -DNVFP4_ENABLE_CUDA=OFF)
  FILE           the harness file mutated (default harness/host_executor.cc)
"""
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mutation  # noqa: E402

REL = sys.argv[8] if len(sys.argv) == 9 else "harness/host_executor.cc"
# The judge of a file: its folder's test binary (ninja target, path in the build).
JUDGES = {"harness/": ("harness_exec_tests", "harness/harness_exec_tests"),
          "kernels/nvfp4_matmul/": ("kernels_tests", "kernels/nvfp4_matmul/kernels_tests")}
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


def added_lines(base, new):
    diff = subprocess.run(["git", "-C", REPO, "diff", "-U0", base, new, "--", REL],
                          capture_output=True, text=True, check=True).stdout
    lines = set()
    for m in re.finditer(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", diff, re.M):
        start, count = int(m.group(1)), int(m.group(2) or 1)
        lines.update(range(start, start + count))
    return lines


def commit_of(rev):
    got = subprocess.run(["git", "-C", REPO, "rev-parse", "--verify", "--quiet", rev + "^{object}"],
                         capture_output=True, text=True)
    if got.returncode:
        sys.exit("run.py: %r names no commit or tree of this repository" % rev)
    return got.stdout.strip()


def judge_of(rel):
    for folder, judge in JUDGES.items():
        if rel.startswith(folder):
            return judge
    sys.exit("run.py: no test binary judges %s (folders: %s)" % (rel, ", ".join(JUDGES)))


def judge(src, build, rec, original):
    lines = list(original)
    lines[rec["line"] - 1] = rec["mutated"] + "\n"
    with open(os.path.join(src, REL), "w") as f:
        f.writelines(lines)
    target, binary = judge_of(REL)
    if subprocess.run(["ninja", "-C", build, target], capture_output=True).returncode:
        return "invalid"
    try:
        run = subprocess.run([os.path.join(build, binary)],
                             capture_output=True, timeout=120)  # bytes: a mutant may print any
    except subprocess.TimeoutExpired:
        return "killed (timeout)"
    return "survived" if run.returncode == 0 else "killed"


def main():
    if len(sys.argv) not in (8, 9):
        sys.exit(__doc__)
    src, build, base, new, seed, count, out = sys.argv[1:8]
    base, new = commit_of(base), commit_of(new)  # the report names commits, not "HEAD"
    judge_of(REL)  # an unjudged file stops here, before the sample
    keep = added_lines(base, new)
    recs = [r for r in mutation.generate_file(src, REL)
            if r["line"] in keep and not r.get("renames_identifier") and not r.get("device_only")]
    random.seed(int(seed))
    sample = sorted(random.sample(recs, min(int(count), len(recs))), key=lambda r: r["line"])
    print("mutants on the added lines: %d, sampled: %d" % (len(recs), len(sample)), flush=True)
    path = os.path.join(src, REL)
    with open(path) as f:
        original = f.readlines()
    results = []
    try:
        for rec in sample:
            outcome = judge(src, build, rec, original)
            results.append(dict(rec, outcome=outcome))
            print(outcome, rec["line"], "|", rec["original"].strip(), "=>", rec["mutated"].strip(),
                  flush=True)
    finally:
        with open(path, "w") as f:
            f.writelines(original)
    killed = sum(r["outcome"].startswith("killed") for r in results)
    survived = sum(r["outcome"] == "survived" for r in results)
    summary = "score %.2f: killed %d, survived %d, invalid %d" % (
        killed / max(1, killed + survived), killed, survived,
        sum(r["outcome"] == "invalid" for r in results))
    with open(out, "w") as f:
        json.dump({"base": base, "new": new, "file": REL, "seed": int(seed), "summary": summary,
                   "mutants": results}, f, indent=1)
    print(summary)


if __name__ == "__main__":
    main()
