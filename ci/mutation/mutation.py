#!/usr/bin/env python3
"""Mutation testing of kernels/nvfp4_matmul/ (the route kernels and the dispatcher), judged
by the host test suite. ci/mutation/README.md says how to run it and what the
outcomes mean.

Mutants come from universalmutator's `mutate` (regexp rules for C/C++; CUDA
text is C++). Each one is applied to a scratch copy of the tree
(build/mutation/src, never the work tree), rebuilt incrementally in one
configured build tree (build/mutation/build, the host preset's settings
without -g, so object files can be compared byte for byte), and judged by the
host suite's tests that link the mutated code, the likeliest killers first,
stopping at the first failure.

Outcomes:
  killed          a test failed (or crashed)
  survived        every judged test passed
  invalid         the mutant did not compile or link
  timeout         the build or the tests ran past their limit (see --test-timeout)
  equivalent-tce  every object file the mutant touches is byte-identical to the
                  original's: it cannot change behaviour; no test runs
  device-only     the line is in a preprocessor region the host build does not
                  compile (a __CUDA_ARCH__ or NVH_HAVE_CUDA branch): the host
                  cannot judge it
Score = killed / (killed + survived), survivors listed in equivalent.json
(mutant id -> why it cannot change behaviour) counted apart.
"""
import argparse
import collections
import datetime
import filecmp
import functools
import glob
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOOL_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(TOOL_DIR))
IGNORE_FILE = os.path.join(TOOL_DIR, "ignore.txt")
EQUIVALENT_FILE = os.path.join(TOOL_DIR, "equivalent.json")
UM_VERSION = "1.14.1"

# The host preset's cache variables (CMakePresets.json), minus -g: debug info
# records columns, so a mutant that only moves a token would never compare
# equal (TCE) with -g. Ninja: cheap no-op checks and `ninja -t deps`.
CONFIGURE = ["-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DCMAKE_CXX_COMPILER=g++",
             "-DNVFP4_ENABLE_CUDA=OFF", "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG"]

# Judge order: the binaries likeliest to kill a kernel mutant first (the
# kernels' own unit tests, 15 s; the golden manifest, 10 s; the families'
# properties, 60 s); the route gate after every stage that logs launches;
# anything not named runs after these, in ctest's order.
STAGE_ORDER = ["kernels_tests", "golden_host_manifest", "property_tests", "bench_tests",
               "route_coverage_gate"]

# Macros the host build defines (none of the CUDA ones): a line under a
# condition that is false with these is not compiled on the host.
HOST_MACROS = {}
DEVICE_MACROS = ("__CUDA_ARCH__", "NVH_HAVE_CUDA", "__CUDACC__")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the files

def mutated_files(root):
    """kernels/nvfp4_matmul/ sources the host can judge, and the GPU-only launchers it cannot."""
    judged, device_only = [], []
    for path in sorted(glob.glob(os.path.join(root, "kernels", "nvfp4_matmul", "*"))):
        name = os.path.basename(path)
        rel = os.path.relpath(path, root)
        if name.endswith("_test.cc"):
            continue
        if name.endswith(".cu"):
            device_only.append(rel)
        elif name.endswith((".cuh", ".h", ".cc")):
            judged.append(rel)
    return judged, device_only


# ------------------------------------------------------ preprocessor regions

def _eval_condition(expr):
    """Value of an #if expression with HOST_MACROS defined (others undefined)."""
    expr = re.sub(r"//.*", "", expr)
    expr = re.sub(r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)",
                  lambda m: "1" if (m.group(1) or m.group(2)) in HOST_MACROS else "0", expr)
    expr = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: str(HOST_MACROS.get(m.group(0), 0)), expr)
    expr = expr.replace("&&", " and ").replace("||", " or ")
    expr = re.sub(r"!(?!=)", " not ", expr)
    try:
        return bool(eval(expr, {"__builtins__": {}}, {}))  # digits, and/or/not, comparisons only
    except Exception:
        return True  # unknown: assume compiled, so the mutant is judged rather than waived


def host_inactive_lines(lines):
    """{line number: condition} for every line the host build does not compile
    because of a device macro (#if defined(__CUDA_ARCH__) and the like)."""
    stack = []  # (this branch active, some earlier branch taken, device-related, condition text)
    out = {}
    for no, text in enumerate(lines, 1):
        m = re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", text)
        if m:
            kind, cond = m.group(1), m.group(2).strip()
            device = any(mac in cond for mac in DEVICE_MACROS)
            if kind in ("if", "ifdef", "ifndef"):
                val = (_eval_condition(cond) if kind == "if" else
                       (cond.split()[0] in HOST_MACROS) == (kind == "ifdef"))
                stack.append([val, val, device, cond])
            elif kind == "elif" and stack:
                top = stack[-1]
                val = (not top[1]) and _eval_condition(cond)
                top[0], top[1], top[2], top[3] = val, top[1] or val, top[2] or device, cond
            elif kind == "else" and stack:
                top = stack[-1]
                top[0], top[3] = not top[1], "else of " + top[3]
                top[1] = True
            elif kind == "endif" and stack:
                stack.pop()
            continue
        for active, _, device, cond in stack:
            if not active and device:
                out[no] = cond
                break
    return out


def static_assert_lines(lines):
    """Line numbers of every line of a static_assert after its first (the
    first is skipped by ignore.txt): a compile-time check, so a mutant there
    fails to build or changes nothing the tests can run."""
    out, depth = set(), 0
    for no, text in enumerate(lines, 1):
        code = re.sub(r'"(\\.|[^"\\])*"', '""', text.split("//")[0])
        if depth > 0:
            out.add(no)
        elif re.match(r"\s*static_assert\s*\(", code):
            depth = 0
        else:
            continue
        depth += code.count("(") - code.count(")")
    return out


# --------------------------------------------------------------- generation

# The operator's kernels moved from kernels/ to kernels/nvfp4_matmul/; ids keep
# the old spelling, so equivalent.json and the committed reports still name
# the same mutants.
ID_PATH_ALIASES = {"kernels/nvfp4_matmul/": "kernels/"}


def mutant_id(rel, line, original, mutated):
    for now, then in ID_PATH_ALIASES.items():
        if rel.startswith(now):
            rel = then + rel[len(now):]
    key = "\0".join([rel, str(line), original, mutated])
    return hashlib.sha256(key.encode()).hexdigest()[:12]


# universalmutator's rule files for C++, in the order `mutate FILE cpp` uses.
UM_RULES = ["universal.rules", "cpp.rules", "c_like.rules"]
IDENTIFIER = re.compile(r"(?<!\w)[A-Za-z_]\w*")  # not the x7Fu of 0x7Fu, nor the f of 1.5f


def renames_identifier(original, mutated):
    """Whether the edit starts inside a name (after its first character):
    universalmutator's numeric rule `(\\D)(\\d+)(\\D)` also rewrites the digits
    of uint32_t, int64_t, e4m3, mod16... into uint0_t or uint(32+1)_t, names
    no declaration has (a fifth of all mutants here)."""
    p = 0
    while p < min(len(original), len(mutated)) and original[p] == mutated[p]:
        p += 1
    return any(t.start() < p < t.end() for t in IDENTIFIER.finditer(original))


def generate_file(root, rel):
    """Every mutant universalmutator makes of one file: the engine `mutate`
    runs (mutator.mutants_regexp, called here as a library: the command line
    writes one full copy of the file per mutant, 5 minutes for kernels/nvfp4_matmul/ on
    this machine against 2 s), with `mutate FILE cpp`'s rules, ignore.txt's
    lines skipped and string-only changes dropped, as `mutate` does."""
    import contextlib
    import io
    from universalmutator import mutator
    with open(os.path.join(root, rel)) as f:
        source = f.read().splitlines(keepends=True)
    with open(IGNORE_FILE) as f:
        ignore = [l.rstrip("\n") for l in f if l.strip()]
    with contextlib.redirect_stdout(io.StringIO()):
        raw = mutator.mutants_regexp(source, ruleFiles=UM_RULES, ignorePatterns=ignore, ignoreStringOnly=True)
    inactive = host_inactive_lines([l.rstrip("\n") for l in source])
    compile_time = static_assert_lines([l.rstrip("\n") for l in source])
    out, seen = [], set()
    for line, new, *_ in raw:
        original, mutated = source[line - 1].rstrip("\n"), new.rstrip("\n")
        rec = {"id": mutant_id(rel, line, original, mutated), "file": rel, "line": line,
               "original": original, "mutated": mutated}
        if rec["id"] in seen:
            continue
        seen.add(rec["id"])
        if line in compile_time:  # ignore.txt skips a static_assert's first line; these are the rest
            continue
        if line in inactive:
            rec["device_only"] = inactive[line]
        if renames_identifier(original, mutated):
            rec["renames_identifier"] = True
        out.append(rec)
    return out


def generate(root, files):
    mutants = []
    for rel in files:
        t0 = time.time()
        recs = generate_file(root, rel)
        log("generated %5d mutants of %s (%.1f s)" % (len(recs), rel, time.time() - t0))
        mutants.extend(recs)
    return mutants


def apply_mutant(text_lines, m):
    """The file's lines with mutant m applied (m['line'] replaced)."""
    i = m["line"] - 1
    if text_lines[i] != m["original"]:
        raise RuntimeError("mutant %s: line %d of %s no longer reads %r" % (m["id"], m["line"], m["file"], m["original"]))
    return text_lines[:i] + m["mutated"].split("\n") + text_lines[i + 1:]


# ----------------------------------------------------------------- sampling

def stratified_sample(mutants, n, seed):
    """n mutants (judgeable ones: not device-only, no renamed identifier),
    every file represented,
    the rest spread in proportion to each file's count. Stable for a seed:
    candidates are ordered by id before the draw."""
    by_file = collections.OrderedDict()
    for m in sorted(mutants, key=lambda m: (m["file"], m["id"])):
        if "device_only" not in m and "renames_identifier" not in m:
            by_file.setdefault(m["file"], []).append(m)
    rng = random.Random(seed)
    files = list(by_file)
    total = sum(len(v) for v in by_file.values())
    quota = {f: 1 for f in files} if n >= len(files) else {f: 0 for f in files}
    if n < len(files):
        for f in rng.sample(files, n):
            quota[f] = 1
    left = n - sum(quota.values())
    if left > 0:
        shares = {f: left * len(by_file[f]) / total for f in files}
        for f in files:
            quota[f] += int(shares[f])
        rest = n - sum(quota.values())
        for f in sorted(files, key=lambda f: shares[f] - int(shares[f]), reverse=True)[:rest]:
            quota[f] += 1
    picked = []
    for f in files:
        picked.extend(rng.sample(by_file[f], min(quota[f], len(by_file[f]))))
    return picked


def judging_order(mutants):
    """One mutant of every file first (so a run cut short by --budget still
    spans every file), then the rest by file and line (a file's rebuilds back
    to back: restoring a header rebuilds its dependents once per switch)."""
    ordered = sorted(mutants, key=lambda m: (m["file"], m["line"], m["id"]))
    first, rest, seen = [], [], set()
    for m in ordered:
        (rest if m["file"] in seen else first).append(m)
        seen.add(m["file"])
    return first + rest


# ------------------------------------------------------------- build & tree

def run(cmd, cwd=None, timeout=None, env=None):
    """(returncode or 'timeout', output, seconds); the whole process group is
    ended on timeout (a mutant may loop forever)."""
    t0 = time.time()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, errors="replace", start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out, time.time() - t0
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return "timeout", out, time.time() - t0
    except BaseException:  # stopped (SIGTERM, ^C): end what we started, then unwind to the restore
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise


def sync_tree(root, dst):
    """Copy the work tree's files (tracked and untracked-not-ignored) to dst,
    writing only files whose content differs, so the build there stays
    incremental; files gone from the tree are removed."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root,
                           capture_output=True, check=True).stdout.decode().split("\0")
    files = {f for f in files if f and os.path.isfile(os.path.join(root, f))}
    changed = 0
    for f in sorted(files):
        s, d = os.path.join(root, f), os.path.join(dst, f)
        if os.path.exists(d) and filecmp.cmp(s, d, shallow=False):
            continue
        os.makedirs(os.path.dirname(d), exist_ok=True)
        shutil.copy2(s, d)
        os.utime(d)  # newer than any object built from the old content
        changed += 1
    for dirpath, _, names in os.walk(dst):
        for n in names:
            f = os.path.relpath(os.path.join(dirpath, n), dst)
            if f not in files:
                os.remove(os.path.join(dirpath, n))
    return changed


class Tree:
    """The scratch source copy and its one configured build tree."""

    def __init__(self, work, jobs):
        self.work = work
        self.src = os.path.join(work, "src")
        self.build = os.path.join(work, "build")
        self.jobs = jobs

    @functools.cached_property
    def instrumented(self):
        """Whether the tree is a gcov build (the coverage preset); read once."""
        try:
            with open(os.path.join(self.build, "CMakeCache.txt")) as f:
                return "NVFP4_COVERAGE:BOOL=ON" in f.read()
        except OSError:
            return False

    def ninja(self, targets, timeout=None):
        return run(["nice", "-n", "19", "ninja", "-j", str(self.jobs)] + targets, cwd=self.build, timeout=timeout)

    def prepare(self, root):
        """Sync the scratch copy, configure once, and build the binaries that
        link kernels/nvfp4_matmul/ code: no mutant can change the others (reference/nvfp4_matmul/ and
        harness/ test binaries), so they are neither built nor run."""
        os.makedirs(self.src, exist_ok=True)
        changed = sync_tree(root, self.src)
        log("scratch copy: %d files updated" % changed)
        if not os.path.exists(os.path.join(self.build, "build.ninja")):
            subprocess.run(["cmake", "-S", self.src, "-B", self.build] + CONFIGURE, check=True,
                           stdout=subprocess.DEVNULL)
        self.kernel_binaries = self.binaries_linking(os.path.join(self.src, "kernels") + os.sep)
        t0 = time.time()
        rc, out, _ = self.ninja(self.kernel_binaries)
        if rc != 0:
            raise RuntimeError("the unmutated tree does not build:\n" + out[-4000:])
        log("unmutated build of %s: %.0f s" % (" ".join(self.kernel_binaries), time.time() - t0))

    def binaries_linking(self, prefix):
        """The executables one of whose inputs (sources, libraries, all the
        way down) lies under prefix."""
        out = subprocess.run(["ninja", "-t", "targets", "all"], cwd=self.build, capture_output=True, text=True,
                             check=True).stdout
        exes = [l.rsplit(": ", 1)[0] for l in out.splitlines() if l.rsplit(": ", 1)[-1].startswith("CXX_EXECUTABLE")]
        return [e for e in exes if any(i.startswith(prefix) for i in self.target_inputs(e))]

    def snapshot_outputs(self):
        """Copy every build output (objects, libraries, binaries) of the
        unmutated build aside with its mtime. After a mutant, restore() puts
        back the source with its old mtime and these outputs, so ninja sees a
        clean tree: no rebuild of the unmutated code between mutants (a header
        like nvfp4_types.h has 30 dependent objects)."""
        out = subprocess.run(["ninja", "-t", "targets", "all"], cwd=self.build, capture_output=True, text=True,
                             check=True).stdout
        cache = os.path.join(self.work, "pristine")
        shutil.rmtree(cache, ignore_errors=True)
        self.pristine = {}
        for line in out.splitlines():
            target, rule = line.rsplit(": ", 1)
            path = os.path.join(self.build, target)
            if rule == "phony" or not os.path.isfile(path):
                continue
            if os.path.isabs(target):  # generated files CMake names by absolute path
                target = os.path.relpath(target, self.build)
                path = os.path.join(self.build, target)
            os.makedirs(os.path.dirname(os.path.join(cache, target)), exist_ok=True)
            shutil.copy2(path, os.path.join(cache, target))
            self.pristine[target] = os.stat(path).st_mtime_ns
            notes = path[:-2] + ".gcno"  # a gcov build: the compile's notes must match the restored object
            if target.endswith(".o") and os.path.isfile(notes):
                shutil.copy2(notes, os.path.join(cache, target[:-2] + ".gcno"))
                self.pristine[target[:-2] + ".gcno"] = os.stat(notes).st_mtime_ns
        self.cache = cache

    def restore_outputs(self):
        """Puts back every output a mutant's build changed; True when ninja
        then has nothing to do (checked, not assumed)."""
        for target, mtime in self.pristine.items():
            path = os.path.join(self.build, target)
            try:
                same = os.stat(path).st_mtime_ns == mtime
            except FileNotFoundError:  # a failed compile removes its object
                same = False
            if not same:
                shutil.copy2(os.path.join(self.cache, target), path)
        # A real run, not `ninja -n`: a dry run always shows CMake re-running,
        # since the CONFIGURE_DEPENDS glob check cannot run in it.
        r = subprocess.run(["ninja"] + self.kernel_binaries, cwd=self.build, capture_output=True, text=True)
        return "no work to do" in r.stdout

    def object_deps(self):
        """{object path: set of source-tree-relative inputs} from ninja's deps log."""
        out = subprocess.run(["ninja", "-t", "deps"], cwd=self.build, capture_output=True, text=True,
                             check=True).stdout
        deps, cur = {}, None
        for line in out.splitlines():
            if line and not line.startswith(" ") and ":" in line:
                cur = line.split(":")[0]
                deps[cur] = set()
            elif line.strip() and cur:
                p = os.path.normpath(os.path.join(self.build, line.strip()))
                if p.startswith(self.src + os.sep):
                    deps[cur].add(os.path.relpath(p, self.src))
        return deps

    def obj_hash(self, obj):
        with open(os.path.join(self.build, obj), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()

    def target_inputs(self, target):
        out = subprocess.run(["ninja", "-t", "inputs", target], cwd=self.build, capture_output=True,
                             text=True).stdout
        return set(out.split())


class InTree(Tree):
    """An existing Ninja build of the host preset (CI's build/host, just built
    and tested by ci/test.sh) judged in place: the mutant is written into the
    work tree itself and put back (content and mtime) after each mutant, and
    on SIGTERM or ^C through Judge.judge's `finally`. This saves CI the 10 to
    15 minutes of building a second tree. That build has -g, whose line and
    column records differ for a mutant that only moves a token, so TCE
    compares the objects with their debug sections stripped (gcc's code does
    not depend on -g)."""

    def __init__(self, root, build, work, jobs):
        super().__init__(work, jobs)
        self.src = root
        self.build = os.path.abspath(build)

    def prepare(self, root):
        if not os.path.exists(os.path.join(self.build, "build.ninja")):
            raise RuntimeError("--in-tree %s: no Ninja build there (build it first: bash ci/build.sh host)"
                               % self.build)
        self.kernel_binaries = self.binaries_linking(os.path.join(self.src, "kernels") + os.sep)
        t0 = time.time()
        rc, out, _ = self.ninja(self.kernel_binaries)
        if rc != 0:
            raise RuntimeError("the unmutated tree does not build:\n" + out[-4000:])
        log("unmutated build of %s in %s: %.0f s" % (" ".join(self.kernel_binaries), self.build, time.time() - t0))

    def obj_hash(self, obj):
        with tempfile.NamedTemporaryFile(suffix=".o") as stripped:
            subprocess.run(["objcopy", "--strip-debug", os.path.join(self.build, obj), stripped.name], check=True)
            return hashlib.sha256(stripped.read()).hexdigest()


# -------------------------------------------------------------------- judge

def ctest_tests(build):
    """ctest's tests: name, command, working dir, environment."""
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, capture_output=True, text=True,
                         check=True).stdout
    tests = []
    for t in json.loads(out)["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        tests.append({"name": t["name"], "command": t.get("command", []),
                      "cwd": props.get("WORKING_DIRECTORY", build),
                      "env": dict(e.split("=", 1) for e in props.get("ENVIRONMENT", [])),
                      "skip_regex": props.get("SKIP_REGULAR_EXPRESSION", [])})
    return tests


class Stage:
    """One judge step: a gtest binary with all its cases (`tests`, their
    gtest names) in one process (--gtest_fail_fast) or split over several
    (run_stages), or one non-gtest ctest test, run by its command."""

    def __init__(self, name, command, cwd, env, exe, tests=(), ctest_names=()):
        self.name, self.command, self.cwd, self.env, self.exe = name, command, cwd, env, exe
        self.tests = list(tests)  # gtest names, as --gtest_filter takes them
        self.ctest_names = list(ctest_names)  # the same tests as ctest names them (its timings' keys)

    @property
    def cases(self):
        """The ctest tests the stage runs: its gtest cases, or its one command."""
        return max(1, len(self.tests))


def judge_stages(tree):
    built = {os.path.join(tree.build, b) for b in tree.kernel_binaries}
    return stages_of(ctest_tests(tree.build), built)


def stages_of(tests, built):
    """The judge's stages from ctest's tests (ctest_tests): one a gtest
    binary among `built` (the paths of the binaries that link the mutated
    code), one a non-gtest test run by such a binary, in STAGE_ORDER."""
    gtest_bins, stages = collections.OrderedDict(), []
    for t in tests:
        cmd = t["command"]
        if not cmd:
            # A test with no command: gtest_discover_tests' "<binary>_NOT_BUILT"
            # stand-in for a test binary the scratch build did not build (it
            # builds only those linking kernels/ code), so nothing the judge runs.
            continue
        filters = [a.split("=", 1)[1] for a in cmd[1:] if a.startswith("--gtest_filter=")]
        if filters:
            b = gtest_bins.setdefault(cmd[0], {"env": t["env"], "cwd": t["cwd"], "tests": [], "ctest_names": []})
            b["tests"].append(filters[0])
            b["ctest_names"].append(t["name"])
        elif t["name"] == "route_log_reset":
            continue  # the judge clears the log itself, before the first stage
        else:
            exe = cmd[0]
            for a in cmd:  # cmake -P scripts: the tool they run is the dependency
                if a.startswith("-DTOOL="):
                    exe = a.split("=", 1)[1]
            stages.append(Stage(t["name"], cmd, t["cwd"], t["env"], exe))
    for exe, b in gtest_bins.items():
        stages.append(Stage(os.path.basename(exe), [exe, "--gtest_fail_fast", "--gtest_brief=1"],
                            b["cwd"], b["env"], exe, b["tests"], b["ctest_names"]))

    def order(s):
        return STAGE_ORDER.index(s.name) if s.name in STAGE_ORDER else len(STAGE_ORDER)
    stages = [s for s in stages if s.exe in built]
    stages.sort(key=order)
    return stages


GTEST_FAILED = re.compile(r"^\[  FAILED  \] ([^\s,]+)", re.M)


def ctest_costs(build):
    """Seconds per test from ctest's own record of the last run in `build`
    (Testing/Temporary/CTestCostData.txt: "name runs seconds" lines, then
    "---"; a name may hold spaces: gtest_discover_tests appends "  #
    GetParam() = ..." to a parameterized test's); {} when there is none."""
    path = os.path.join(build, "Testing", "Temporary", "CTestCostData.txt")
    costs = {}
    if not os.path.exists(path):
        return costs
    with open(path) as f:
        for line in f:
            if line.startswith("---"):
                break
            parts = line.rstrip("\n").rsplit(" ", 2)
            if len(parts) == 3:
                try:
                    costs[parts[0]] = float(parts[2])
                except ValueError:
                    pass
    return costs


def shares(tests, costs, n):
    """`tests` split into at most n lists of about equal total cost (the
    longest first, each to the lightest list; a test without a cost counts
    1 s), each list in the tests' own order."""
    n = max(1, min(n, len(tests)))
    load, owner = [0.0] * n, {}
    for t in sorted(tests, key=lambda t: -costs.get(t, 1.0)):
        i = load.index(min(load))
        owner[t] = i
        load[i] += costs.get(t, 1.0)
    return [[t for t in tests if owner[t] == i] for i in range(n)]


# A test that took at most this long in the last ctest run is "cheap": a
# stage runs its cheap tests first, then the rest, so a mutant that a cheap
# test kills is not judged after the slow ones. CI's sample has such a
# mutant (07dc3f29b8a3, prefill_fused_sum.cuh): its killing test took 0.65 s
# (3.3 s with gcov's atomic counters), yet it came after 117 s of
# kernels_tests' tests shared over two processes. On the coverage tree
# kernels_tests has 125 cases of at most 1 s (10.0 s in all) and 9 slower
# ones (55.7 s).
CHEAP_TEST_SECONDS = 1.0


def tiers(tests, costs):
    """`tests` as [cheap ones, the rest] (CHEAP_TEST_SECONDS; a test without a
    cost counts as cheap), each in the tests' own order, empty tiers left out."""
    cheap = [t for t in tests if costs.get(t, 1.0) <= CHEAP_TEST_SECONDS]
    rest = [t for t in tests if costs.get(t, 1.0) > CHEAP_TEST_SECONDS]
    return [tier for tier in (cheap, rest) if tier]


def run_together(cmds, cwd, timeout, env):
    """run() for several commands at once: (0, "", seconds) when all pass,
    else the first failure's (returncode, its output, seconds), the others
    ended by process group; "timeout" past `timeout`."""
    t0 = time.time()
    outs = [tempfile.TemporaryFile(mode="w+", errors="replace") for _ in cmds]
    procs = [subprocess.Popen(c, cwd=cwd, env=env, stdout=o, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True) for c, o in zip(cmds, outs)]

    def end_all():
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def output(i):
        outs[i].seek(0)
        return outs[i].read()
    try:
        while True:
            codes = [p.poll() for p in procs]
            failed = [i for i, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                end_all()
                return codes[failed[0]], output(failed[0]), time.time() - t0
            if all(c == 0 for c in codes):
                return 0, "", time.time() - t0
            if time.time() - t0 > timeout:
                end_all()
                return "timeout", "\n".join(output(i) for i in range(len(cmds))), time.time() - t0
            time.sleep(0.1)
    except BaseException:  # stopped (SIGTERM, ^C): end what we started, then unwind to the restore
        end_all()
        raise
    finally:
        for o in outs:
            o.close()


def run_stages(tree, stages, route_log, timeout):
    """(outcome, killing test, output tail, seconds): the first failing stage
    kills; the whole judge runs under one time limit. With tree.jobs > 1 a
    gtest stage's cases run as that many processes at once, shared out by
    the last ctest run's timings (ctest_costs): in one process a mutant of
    CI's sample took 218 s of tests to reach its killing test late in
    kernels_tests while CI's second core idled, 96 s shared over both. And a
    gtest stage runs its cheap cases first (tiers), each tier shared so."""
    if os.path.exists(route_log):
        os.remove(route_log)
    costs = ctest_costs(tree.build)
    t0 = time.time()
    for s in stages:
        left = timeout - (time.time() - t0)
        if left <= 0:
            return "timeout", s.name, "", time.time() - t0
        env = dict(os.environ)
        env.update(s.env)
        if tree.instrumented:
            # gcov's counters are plain adds: one thread a test, as ci/test.sh runs them.
            env.setdefault("NVFP4_HOST_THREADS", "1")
        if len(s.tests) > 1:
            seconds = {test: costs.get(name, 1.0) for test, name in zip(s.tests, s.ctest_names)}
            for tier in tiers(s.tests, seconds):
                cmds = [s.command + ["--gtest_filter=" + ":".join(part)]
                        for part in shares(tier, seconds, tree.jobs)]
                rc, out, _ = run_together(cmds, cwd=s.cwd, timeout=timeout - (time.time() - t0), env=env)
                if rc != 0:
                    break
        else:
            rc, out, _ = run(s.command, cwd=s.cwd, timeout=left, env=env)
        if rc == "timeout":
            return "timeout", s.name, out[-1500:], time.time() - t0
        if rc != 0:
            m = GTEST_FAILED.search(out)
            who = "%s: %s" % (s.name, m.group(1)) if m else "%s (exit %s)" % (s.name, rc)
            return "killed", who, out[-1500:], time.time() - t0
    return "survived", None, "", time.time() - t0


class Judge:
    def __init__(self, tree, test_timeout, build_timeout):
        self.tree = tree
        self.build_timeout = build_timeout
        self.deps = tree.object_deps()
        self.baseline = {o: tree.obj_hash(o) for o in self.deps}
        self.stages = judge_stages(tree)
        self.route_log = None
        for s in self.stages:
            self.route_log = self.route_log or s.env.get("NVFP4_ROUTE_LOG")
        self.route_log = self.route_log or os.path.join(tree.build, "route-logs", "tests.jsonl")
        self.stage_inputs = {s.name: tree.target_inputs(os.path.relpath(s.exe, tree.build)) for s in self.stages}
        self.test_timeout = test_timeout
        self.baseline_seconds = None

    def objects_of(self, rel):
        return sorted(o for o, d in self.deps.items() if rel in d)

    def stages_for(self, objects):
        """The stages whose binary links one of these objects (the others
        cannot change), in judge order."""
        objs = set(objects)
        return [s for s in self.stages if objs & self.stage_inputs[s.name]]

    def check_unmutated(self, run_judge=True):
        """The judge on the unmutated tree: it must pass (a judge that fails
        already kills everything), and its time sets the test limit. CI
        skips it (run_judge False): its test command ran the suite just
        before, and the limit is then given (--test-timeout)."""
        rc, out, _ = self.tree.ninja([os.path.relpath(s.exe, self.tree.build) for s in self.stages])
        if rc != 0:
            raise RuntimeError("unmutated judge targets do not build:\n" + out[-3000:])
        if not run_judge:
            self.baseline_seconds = 0.0
            self.tree.snapshot_outputs()
            log("unmutated judge skipped; per-mutant test limit %.0f s" % self.test_timeout)
            return
        outcome, who, tail, secs = run_stages(self.tree, self.stages, self.route_log, 3600)
        if outcome != "survived":
            raise RuntimeError("the unmutated tree fails its own judge (%s):\n%s" % (who, tail))
        self.baseline_seconds = secs
        if self.test_timeout is None:
            # A mutant can make a loop endless; the suite under load from other
            # jobs on this machine has run up to ~2x its quiet time, so 3x + 60 s
            # separates "slow" from "never ends" without waiting forever.
            self.test_timeout = 3 * secs + 60
        self.tree.snapshot_outputs()
        log("unmutated judge: %.0f s over %d stages; per-mutant test limit %.0f s"
            % (secs, len(self.stages), self.test_timeout))

    def judge(self, m, original_lines):
        path = os.path.join(self.tree.src, m["file"])
        res = {k: m[k] for k in ("id", "file", "line", "original", "mutated")}
        t0 = time.time()
        if "device_only" in m:
            res.update(outcome="device-only", detail="under #if " + m["device_only"], seconds=0.0)
            return res
        with open(path, "rb") as f:
            pristine = f.read()
        pristine_stat = os.stat(path)
        try:
            with open(path, "w") as f:
                f.write("\n".join(apply_mutant(original_lines, m)) + "\n")
            objects = self.objects_of(m["file"])
            rc, out, bsecs = self.tree.ninja(objects, timeout=self.build_timeout)
            res["build_seconds"] = round(bsecs, 1)
            if rc == "timeout":
                res.update(outcome="timeout", detail="build past %d s" % self.build_timeout)
            elif rc != 0:
                err = next((l for l in out.splitlines() if "error" in l), out.strip()[-200:])
                res.update(outcome="invalid", detail=err.replace(self.tree.src + "/", "")[:300])
            elif all(self.tree.obj_hash(o) == self.baseline[o] for o in objects):
                res.update(outcome="equivalent-tce", detail="%d object files byte-identical" % len(objects))
            else:
                stages = self.stages_for(objects)
                rc, out, lsecs = self.tree.ninja(sorted({os.path.relpath(s.exe, self.tree.build) for s in stages}),
                                                 timeout=self.build_timeout)
                res["build_seconds"] = round(bsecs + lsecs, 1)
                if rc != 0:
                    res.update(outcome="invalid" if rc != "timeout" else "timeout",
                               detail="link: " + out.strip()[-200:])
                else:
                    outcome, who, tail, tsecs = run_stages(self.tree, stages, self.route_log, self.test_timeout)
                    res["test_seconds"] = round(tsecs, 1)
                    res.update(outcome=outcome)
                    if outcome == "killed":
                        res["killed_by"] = who
                    elif outcome == "timeout":
                        res["detail"] = "tests past %d s (in %s)" % (self.test_timeout, who)
                    else:
                        res["stages"] = [s.name for s in stages]
        finally:
            with open(path, "wb") as f:
                f.write(pristine)
            os.utime(path, ns=(pristine_stat.st_atime_ns, pristine_stat.st_mtime_ns))
            if not self.tree.restore_outputs():
                # Correct either way: ninja rebuilds what it finds stale.
                log("note: the tree was not clean after restoring %s; ninja will rebuild" % m["id"])
        res["seconds"] = round(time.time() - t0, 1)
        return res


# ------------------------------------------------------------------ reports

def load_equivalent():
    if not os.path.exists(EQUIVALENT_FILE):
        return {}
    with open(EQUIVALENT_FILE) as f:
        return json.load(f)


def write_reports(out_dir, results, counts, device_files, meta, equivalent):
    os.makedirs(out_dir, exist_ok=True)
    for r in results:
        r.pop("equivalent", None)  # the file decides now, not an earlier run
        if r.get("killed_by"):
            r["killed_by"] = r["killed_by"].rstrip(",")  # runs before the gtest name pattern stopped at ","
        if r["outcome"] == "survived" and r["id"] in equivalent:
            r["equivalent"] = equivalent[r["id"]]
    tally = collections.Counter(r["outcome"] for r in results)
    waived = sum(1 for r in results if r.get("equivalent"))
    killed = tally["killed"]
    survived = tally["survived"] - waived
    score = killed / (killed + survived) if killed + survived else None
    summary = {"killed": killed, "survived": survived, "survived_equivalent": waived,
               "invalid": tally["invalid"], "timeout": tally["timeout"],
               "equivalent_tce": tally["equivalent-tce"], "device_only": tally["device-only"],
               "judged": len(results), "score": round(score, 4) if score is not None else None}
    if any("before" in r for r in results):
        # The same mutants judged by the suite as it was, before the tests
        # written for that run's survivors (--merge).
        before = collections.Counter(r.get("before", r["outcome"]) for r in results if not r.get("equivalent"))
        summary["killed_before"], summary["survived_before"] = before["killed"], before["survived"]
        summary["score_before"] = round(before["killed"] / (before["killed"] + before["survived"]), 4)
    secs = [r["seconds"] for r in results if r["outcome"] != "device-only"]
    summary["seconds_total"] = round(sum(secs), 1)
    summary["seconds_per_mutant"] = round(sum(secs) / len(secs), 1) if secs else None
    for kind in ("killed", "survived", "invalid", "equivalent-tce", "timeout"):
        s = [r["seconds"] for r in results if r["outcome"] == kind]
        if s:
            summary["seconds_mean_" + kind.replace("-", "_")] = round(sum(s) / len(s), 1)
    doc = {"meta": meta, "summary": summary, "generated_per_file": counts,
           "device_only_files": device_files, "mutants": sorted(results, key=lambda r: (r["file"], r["line"], r["id"]))}
    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(render_markdown(doc))
    return summary


def md_cell(s):
    return s.replace("|", "\\|").replace("\n", " ⏎ ").strip()


def render_markdown(doc):
    s, meta = doc["summary"], doc["meta"]
    lines = ["# Mutation report: kernels/nvfp4_matmul/ and the dispatcher", ""]
    score = "%.1f %%" % (100 * s["score"]) if s["score"] is not None else "n/a"
    lines += ["Score = killed / (killed + survived) = %d / (%d + %d) = **%s**" % (s["killed"], s["killed"], s["survived"], score), ""]
    if "score_before" in s:
        lines += ["Before the tests written for this run's survivors: %d / (%d + %d) = %.1f %%"
                  % (s["killed_before"], s["killed_before"], s["survived_before"], 100 * s["score_before"]), ""]
    lines += ["| | |", "|---|---|"]
    for k in ("command", "date", "commit", "universalmutator", "sample", "seed", "test_limit_s",
              "unmutated_judge_s"):
        if k in meta:
            lines.append("| %s | %s |" % (k, md_cell(str(meta[k]))))
    for k in ("judged", "killed", "survived", "survived_equivalent", "killed_before", "survived_before", "invalid", "timeout",
              "equivalent_tce", "device_only", "seconds_total", "seconds_per_mutant",
              "seconds_mean_killed", "seconds_mean_survived", "seconds_mean_invalid",
              "seconds_mean_equivalent_tce"):
        if k in s:
            lines.append("| %s | %s |" % (k, s[k]))
    lines += ["", "## Per file", "",
              "| file | generated | judged | killed | survived | equiv. (file) | invalid | TCE | timeout | device-only | score |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    per = collections.defaultdict(collections.Counter)
    for r in doc["mutants"]:
        c = per[r["file"]]
        c["judged"] += 1
        c["survived-eq" if r.get("equivalent") else r["outcome"]] += 1
    for f in sorted(set(doc["generated_per_file"]) | set(per)):
        c = per[f]
        k, sv = c["killed"], c["survived"]
        sc = "%.0f %%" % (100 * k / (k + sv)) if k + sv else "–"
        lines.append("| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %s |" % (
            f, doc["generated_per_file"].get(f, 0), c["judged"], k, sv, c["survived-eq"], c["invalid"],
            c["equivalent-tce"], c["timeout"], c["device-only"], sc))
    for f in doc["device_only_files"]:
        lines.append("| %s | device-only, not judged | | | | | | | | | |" % f)
    surv = [r for r in doc["mutants"] if r["outcome"] == "survived" and not r.get("equivalent")]
    lines += ["", "## Survivors (%d)" % len(surv), ""]
    if surv:
        lines += ["| id | file:line | original | mutated |", "|---|---|---|---|"]
        for r in surv:
            lines.append("| %s | %s:%d | `%s` | `%s` |" % (r["id"], r["file"], r["line"], md_cell(r["original"]),
                                                         md_cell(r["mutated"])))
    eq = [r for r in doc["mutants"] if r.get("equivalent")]
    if eq:
        lines += ["", "## Survivors waived as equivalent (equivalent.json) (%d)" % len(eq), "",
                  "| id | file:line | mutated | why it cannot change behaviour |", "|---|---|---|---|"]
        for r in eq:
            lines.append("| %s | %s:%d | `%s` | %s |" % (r["id"], r["file"], r["line"], md_cell(r["mutated"]),
                                                        md_cell(r["equivalent"])))
    was = [r for r in doc["mutants"] if "before" in r]
    if was:
        lines += ["", "## Survivors of the first judging, judged again after new tests (%d)" % len(was), "",
                  "| id | file:line | mutated | now | by |", "|---|---|---|---|---|"]
        for r in was:
            lines.append("| %s | %s:%d | `%s` | %s | %s |" % (r["id"], r["file"], r["line"], md_cell(r["mutated"]),
                                                             r["outcome"], md_cell(r.get("killed_by") or r.get("detail") or
                                                                                   r.get("equivalent") or "")))
    to = [r for r in doc["mutants"] if r["outcome"] == "timeout"]
    if to:
        lines += ["", "## Timeouts (%d)" % len(to), ""]
        for r in to:
            lines.append("- %s %s:%d `%s` → `%s`: %s" % (r["id"], r["file"], r["line"], md_cell(r["original"]),
                                                        md_cell(r["mutated"]), r.get("detail", "")))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------- main

def ensure_universalmutator():
    if shutil.which("mutate"):
        return
    log("installing universalmutator==%s with pip" % UM_VERSION)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "universalmutator==" + UM_VERSION], check=True)
    if not shutil.which("mutate"):
        raise RuntimeError("pip installed universalmutator but `mutate` is not on PATH")


def merge_reports(paths, out_dir):
    with open(paths[0]) as f:
        base = json.load(f)
    by_id = {r["id"]: r for r in base["mutants"]}
    for p in paths[1:]:
        with open(p) as f:
            for r in json.load(f)["mutants"]:
                old = by_id.get(r["id"])
                if old is None:  # judged only in a later part of the run
                    by_id[r["id"]] = r
                    continue
                if old["outcome"] != r["outcome"]:
                    r["before"] = old.get("before", old["outcome"])
                by_id[r["id"]] = r
    meta = dict(base["meta"], merged=" + ".join(paths))
    summary = write_reports(out_dir, list(by_id.values()), base["generated_per_file"], base["device_only_files"],
                            meta, load_equivalent())
    log("merged: score %s (before %s)" % (summary["score"], summary.get("score_before")))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "mutation"),
                    help="scratch copy and build tree (default: build/mutation)")
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "mutation"), help="folder for report.json and report.md")
    ap.add_argument("--generate-only", action="store_true", help="generate every mutant, print counts per file, stop")
    ap.add_argument("--sample", type=int, help="judge a stratified sample of this many mutants (every file represented)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the sample")
    ap.add_argument("--ids", help="judge only these mutant ids (comma-separated, or a report.json whose survivors, less those "
                         "equivalent.json waives, to re-judge)")
    ap.add_argument("--files", nargs="*", help="only mutants of these files (repo-relative)")
    ap.add_argument("--max-dependents", type=int, metavar="N",
                    help="leave out files that more than N object files include (CI: a widely included header's "
                         "mutant rebuilds 14 to 30 objects, minutes each; the full run judges them)")
    ap.add_argument("--in-tree", metavar="BUILD",
                    help="judge in this existing Ninja build of the host preset (e.g. build/host), mutating the "
                         "work tree in place and restoring it after each mutant; default: a scratch copy in --work")
    ap.add_argument("--jobs", type=int, default=1,
                    help="ninja jobs, and the processes a test binary's cases are shared over (default 1: the machine is shared)")
    ap.add_argument("--test-timeout", type=float, help="seconds for one mutant's tests (default 3x the unmutated judge + 60)")
    ap.add_argument("--build-timeout", type=float, default=900, help="seconds for one mutant's build")
    ap.add_argument("--budget", type=float, help="stop judging new mutants after this many seconds")
    ap.add_argument("--merge", nargs="+", metavar="REPORT",
                    help="no judging: the first report with the results of the others put over it by id (each "
                         "changed result keeps the first report's outcome as `before`; new ids are added), "
                         "written to --out")
    ap.add_argument("--resume", help="a report.json of an earlier run: its results are kept for the ids it judged")
    ap.add_argument("--ci", action="store_true",
                    help="exit 1 if a judged mutant survives that equivalent.json does not waive; with "
                         "--test-timeout, the judge is not first run on the unmutated tree")
    args = ap.parse_args(argv)
    # A stopped run unwinds through Judge.judge's `finally`, which puts the
    # unmutated source and build outputs back (else the next run rebuilds).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    if args.merge:
        return merge_reports(args.merge, args.out)
    ensure_universalmutator()
    judged_files, device_files = mutated_files(ROOT)
    if args.files:
        judged_files = [f for f in judged_files if f in args.files]
    t0 = time.time()
    mutants = generate(ROOT, judged_files)
    counts = collections.Counter(m["file"] for m in mutants)
    dev = collections.Counter(m["file"] for m in mutants if "device_only" in m)
    ren = collections.Counter(m["file"] for m in mutants if "renames_identifier" in m and "device_only" not in m)
    log("%d mutants of %d files generated in %.0f s; device-only (not judged): %s"
        % (len(mutants), len(judged_files), time.time() - t0, ", ".join(device_files)))
    if args.generate_only:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "mutants.json"), "w") as f:
            json.dump(mutants, f, indent=1)
        print("| file | mutants | in device-only regions | renaming an identifier | judgeable |")
        print("|---|---:|---:|---:|---:|")
        for f in judged_files:
            print("| %s | %d | %d | %d | %d |" % (f, counts[f], dev[f], ren[f], counts[f] - dev[f] - ren[f]))
        print("| total | %d | %d | %d | %d |" % (len(mutants), sum(dev.values()), sum(ren.values()),
                                              len(mutants) - sum(dev.values()) - sum(ren.values())))
        return 0

    chosen = mutants
    if args.ids:
        if args.ids.endswith(".json"):
            with open(args.ids) as f:
                prev = json.load(f)
            waived = load_equivalent()
            want = {r["id"] for r in prev["mutants"] if r["outcome"] == "survived" and r["id"] not in waived}
        else:
            want = set(args.ids.split(","))
        chosen = [m for m in mutants if m["id"] in want]
        missing = want - {m["id"] for m in chosen}
        if missing:
            log("ids not generated from the current sources (line moved or code changed): " + ", ".join(sorted(missing)))
    tree = InTree(ROOT, args.in_tree, args.work, args.jobs) if args.in_tree else Tree(args.work, args.jobs)
    os.makedirs(args.work, exist_ok=True)
    lock = open(os.path.join(args.work, "lock"), "w")
    try:
        import fcntl
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        log("another mutation run holds %s; use another --work" % args.work)
        return 2
    tree.prepare(ROOT)
    judge = Judge(tree, args.test_timeout, args.build_timeout)
    if args.max_dependents is not None:
        heavy = sorted({m["file"] for m in chosen if len(judge.objects_of(m["file"])) > args.max_dependents})
        chosen = [m for m in chosen if m["file"] not in heavy]
        log("--max-dependents %d: mutants of %s left out (each rebuilds more objects)"
            % (args.max_dependents, ", ".join(heavy) or "no file"))
    if args.sample is not None:
        chosen = stratified_sample(chosen, args.sample, args.seed)
    chosen = judging_order(chosen)
    log("judging %d mutants" % len(chosen))
    judge.check_unmutated(run_judge=not (args.ci and args.test_timeout))
    meta = {"command": " ".join(["ci/mutation/mutation.py"] + (argv if argv is not None else sys.argv[1:])),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                     text=True).stdout.strip(),
            "universalmutator": UM_VERSION, "seed": args.seed, "sample": args.sample,
            "test_limit_s": round(judge.test_timeout), "unmutated_judge_s": round(judge.baseline_seconds, 1)}
    equivalent = load_equivalent()
    results, lines_of = [], {}
    if args.resume and os.path.exists(args.resume):
        with open(args.resume) as f:
            earlier = {r["id"]: r for r in json.load(f)["mutants"]}
        results = [earlier[m["id"]] for m in chosen if m["id"] in earlier]
        chosen = [m for m in chosen if m["id"] not in earlier]
        log("resumed: %d results kept from %s, %d to judge" % (len(results), args.resume, len(chosen)))
    start = time.time()
    for i, m in enumerate(chosen):
        if args.budget and time.time() - start > args.budget:
            log("budget of %.0f s spent: %d of %d mutants judged" % (args.budget, i, len(chosen)))
            meta["stopped_by_budget"] = "%d of %d judged" % (i, len(chosen))
            break
        if m["file"] not in lines_of:
            with open(os.path.join(tree.src, m["file"])) as f:
                lines_of[m["file"]] = f.read().splitlines()
        if args.ci and m["id"] in equivalent:
            # CI does not spend minutes re-judging a mutant equivalent.json
            # already waives (with its reason): a survivor's judge is the
            # whole suite. A changed line makes a new id, judged again.
            r = dict(m, outcome="survived", detail="not judged: equivalent.json waives it",
                     build_seconds=0.0, test_seconds=0.0, seconds=0.0)
        else:
            r = judge.judge(m, lines_of[m["file"]])
        results.append(r)
        log("[%d/%d] %s %s:%d %-14s %5.1f s %s" % (i + 1, len(chosen), r["id"], r["file"], r["line"], r["outcome"],
                                                  r["seconds"], r.get("killed_by") or r.get("detail") or ""))
        summary = write_reports(args.out, results, dict(counts), device_files, meta, equivalent)
    summary = write_reports(args.out, results, dict(counts), device_files, meta, equivalent)
    log("score %s: killed %d, survived %d (+%d waived), invalid %d, TCE %d, timeout %d, device-only %d; %.0f s"
        % (summary["score"], summary["killed"], summary["survived"], summary["survived_equivalent"],
           summary["invalid"], summary["equivalent_tce"], summary["timeout"], summary["device_only"],
           time.time() - start))
    log("reports: %s/report.json, %s/report.md" % (args.out, args.out))
    if args.ci and summary["survived"] > 0:
        log("FAIL: %d sampled mutants survived that equivalent.json does not waive" % summary["survived"])
        return 1
    # A timeout is not a kill: on the gcov tree a survivor's whole judge can
    # outlast the limit, so CI fails on one unless equivalent.json waives it
    # (e.g. a mutant that makes a loop endless, with that reason).
    timed_out = [r["id"] for r in results if r["outcome"] == "timeout" and r["id"] not in equivalent]
    if args.ci and timed_out:
        log("FAIL: sampled mutants ran past the test limit without a failing test (not waived in "
            "equivalent.json): " + ", ".join(timed_out))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
