#!/usr/bin/env python3
"""Unit tests of mutation.py's pure parts (ctest: mutation_tool_tests)."""
import os
import sys
import tempfile
import time
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutation  # noqa: E402


class HostInactiveLines(unittest.TestCase):
    def test_cuda_arch_branch_is_device_only_and_its_else_is_not(self):
        lines = ["int f() {",                    # 1
                 "#if defined(__CUDA_ARCH__)",   # 2
                 "  return 1;",                  # 3
                 "#else",                        # 4
                 "  return 2;",                  # 5
                 "#endif",                       # 6
                 "}"]
        self.assertEqual(set(mutation.host_inactive_lines(lines)), {3})

    def test_negated_and_nested_conditions(self):
        lines = ["#if !defined(NVH_HAVE_CUDA)",  # 1
                 "host();",                      # 2
                 "#else",                        # 3
                 "#  if 1",                      # 4
                 "device();",                    # 5
                 "#  endif",                     # 6
                 "#endif",                       # 7
                 "#ifdef __CUDACC__",            # 8
                 "cuda();",                      # 9
                 "#elif defined(__CUDA_ARCH__)",  # 10
                 "arch();",                      # 11
                 "#else",                        # 12
                 "plain();",                     # 13
                 "#endif"]
        self.assertEqual(set(mutation.host_inactive_lines(lines)), {5, 9, 11})

    def test_a_false_region_of_no_device_macro_is_not_device_only(self):
        self.assertEqual(mutation.host_inactive_lines(["#if 0", "x();", "#endif"]), {})


class RenamesIdentifier(unittest.TestCase):
    def test_digits_inside_a_name(self):
        self.assertTrue(mutation.renames_identifier("uint32_t x = 3;", "uint0_t x = 3;"))
        self.assertTrue(mutation.renames_identifier("e4m3(x)", "e(4+1)m3(x)"))

    def test_literals_and_operators_are_not_renames(self):
        self.assertFalse(mutation.renames_identifier("x = 32;", "x = 0;"))
        self.assertFalse(mutation.renames_identifier("a * b", "a + b"))
        self.assertFalse(mutation.renames_identifier("f(0x7Fu)", "f(0x0Fu)"))


class Ids(unittest.TestCase):
    def test_id_is_stable_and_depends_on_every_field(self):
        a = mutation.mutant_id("kernels/nvfp4_matmul/x.cuh", 3, "a * b", "a + b")
        self.assertEqual(a, mutation.mutant_id("kernels/nvfp4_matmul/x.cuh", 3, "a * b", "a + b"))
        self.assertEqual(len(a), 12)
        for other in [("kernels/nvfp4_matmul/y.cuh", 3, "a * b", "a + b"), ("kernels/nvfp4_matmul/x.cuh", 4, "a * b", "a + b"),
                      ("kernels/nvfp4_matmul/x.cuh", 3, "a  * b", "a + b"), ("kernels/nvfp4_matmul/x.cuh", 3, "a * b", "a - b")]:
            self.assertNotEqual(a, mutation.mutant_id(*other))

    def test_ids_keep_the_spelling_of_before_the_move_into_the_wing(self):
        # equivalent.json's waivers were written when the files sat in kernels/.
        self.assertEqual(mutation.mutant_id("kernels/nvfp4_matmul/x.cuh", 3, "a * b", "a + b"),
                         mutation.mutant_id("kernels/x.cuh", 3, "a * b", "a + b"))


class Sampling(unittest.TestCase):
    def mutants(self):
        out = []
        for f, n in (("a.cc", 50), ("b.cuh", 30), ("c.h", 3)):
            for i in range(n):
                out.append({"id": "%s-%03d" % (f, i), "file": f, "line": i + 1})
        out.append({"id": "dev", "file": "d.cc", "line": 1, "device_only": "defined(__CUDA_ARCH__)"})
        out.append({"id": "ren", "file": "a.cc", "line": 1, "renames_identifier": True})
        return out

    def test_every_judgeable_file_is_represented_and_the_draw_is_seeded(self):
        s = mutation.stratified_sample(self.mutants(), 10, 7)
        self.assertEqual(len(s), 10)
        self.assertEqual({m["file"] for m in s}, {"a.cc", "b.cuh", "c.h"})
        self.assertNotIn("dev", [m["id"] for m in s])
        self.assertNotIn("ren", [m["id"] for m in s])
        self.assertEqual([m["id"] for m in s], [m["id"] for m in mutation.stratified_sample(self.mutants(), 10, 7)])
        self.assertNotEqual({m["id"] for m in s}, {m["id"] for m in mutation.stratified_sample(self.mutants(), 10, 8)})

    def test_fewer_than_the_files_takes_one_each_from_some(self):
        s = mutation.stratified_sample(self.mutants(), 2, 1)
        self.assertEqual(len(s), 2)
        self.assertEqual(len({m["file"] for m in s}), 2)

    def test_judging_order_spans_every_file_first(self):
        order = mutation.judging_order(mutation.stratified_sample(self.mutants(), 12, 3))
        self.assertEqual([m["file"] for m in order[:3]], ["a.cc", "b.cuh", "c.h"])


class ApplyMutant(unittest.TestCase):
    def test_replaces_one_line_and_refuses_a_moved_line(self):
        lines = ["a;", "b = 1 * 2;", "c;"]
        m = {"id": "x", "file": "f", "line": 2, "original": "b = 1 * 2;", "mutated": "b = 1 * 2;\nbreak;"}
        self.assertEqual(mutation.apply_mutant(lines, m), ["a;", "b = 1 * 2;", "break;", "c;"])
        with self.assertRaises(RuntimeError):
            mutation.apply_mutant(["a;", "b = 3;", "c;"], m)


class JudgeStages(unittest.TestCase):
    def test_orders_the_built_binaries_and_skips_tests_without_a_command(self):
        def test(name, command):
            return {"name": name, "command": command, "cwd": "/b", "env": {}, "skip_regex": []}
        tests = [
            test("harness_exec_tests_NOT_BUILT", []),  # gtest_discover_tests' stand-in
            test("Suite.Case", ["/b/other_tests", "--gtest_filter=Suite.Case"]),
            test("bench_tests", ["/b/bench_tests"]),
            test("Fused.Case", ["/b/kernels_tests", "--gtest_filter=Fused.Case"]),
            test("Fused.Other", ["/b/kernels_tests", "--gtest_filter=Fused.Other"]),
            test("B/On.Case/host  # GetParam() = \"host\"", ["/b/kernels_tests", "--gtest_filter=B/On.Case/host"]),
        ]
        stages = mutation.stages_of(tests, {"/b/kernels_tests", "/b/bench_tests"})
        self.assertEqual([(s.name, s.cases) for s in stages], [("kernels_tests", 3), ("bench_tests", 1)])
        self.assertEqual(stages[0].tests, ["Fused.Case", "Fused.Other", "B/On.Case/host"])
        self.assertEqual(stages[0].ctest_names, ["Fused.Case", "Fused.Other", 'B/On.Case/host  # GetParam() = "host"'])
        self.assertEqual(stages[1].tests, [])


class SharedJudge(unittest.TestCase):
    def test_shares_balance_the_cost_and_keep_the_tests_order(self):
        tests = ["a", "b", "c", "d", "e"]
        parts = mutation.shares(tests, {"a": 10.0, "b": 1.0, "c": 6.0, "d": 3.0}, 2)
        # a, c, d, then b (the tie at 10 and 9 + 1), then e (no cost: 1 s) onto the first list.
        self.assertEqual(parts, [["a", "e"], ["b", "c", "d"]])
        self.assertEqual(mutation.shares(["a", "b", "c"], {}, 2), [["a", "c"], ["b"]])
        self.assertEqual(mutation.shares(["a"], {}, 4), [["a"]])

    def test_tiers_put_the_cheap_tests_first(self):
        costs = {"a": 10.0, "b": 0.5, "c": 6.0, "d": mutation.CHEAP_TEST_SECONDS}
        self.assertEqual(mutation.tiers(["a", "b", "c", "d", "e"], costs), [["b", "d", "e"], ["a", "c"]])
        self.assertEqual(mutation.tiers(["a", "c"], costs), [["a", "c"]])

    def test_a_stage_that_a_cheap_test_fails_never_starts_its_slow_tests(self):
        # A stand-in gtest binary: it logs each --gtest_filter it is given and
        # fails when the filter names Cheap.Kills; the last ctest run's costs
        # make Slow.One and Slow.Two slow.
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "Testing", "Temporary"))
            with open(os.path.join(d, "Testing", "Temporary", "CTestCostData.txt"), "w") as f:
                f.write("Slow.One 1 300\nSlow.Two 1 200\nCheap.Kills 1 0.6\nCheap.Other 1 0.1\n---\n")
            fake, log_path = os.path.join(d, "fake_tests"), os.path.join(d, "filters")
            with open(fake, "w") as f:
                f.write('#!/bin/sh\nfor a; do case "$a" in --gtest_filter=*) echo "${a#*=}" >> %s;; esac; done\n'
                        'case "$*" in *Cheap.Kills*) echo "[  FAILED  ] Cheap.Kills"; exit 1;; esac\n' % log_path)
            os.chmod(fake, 0o755)
            tests = ["Slow.One", "Cheap.Kills", "Slow.Two", "Cheap.Other"]
            stage = mutation.Stage("fake_tests", [fake], d, {}, fake, tests, tests)
            for jobs in (1, 2):
                tree = types.SimpleNamespace(build=d, jobs=jobs, instrumented=False)
                outcome, who, _, _ = mutation.run_stages(tree, [stage], os.path.join(d, "routes.jsonl"), 60)
                self.assertEqual((outcome, who), ("killed", "fake_tests: Cheap.Kills"))
                with open(log_path) as f:
                    ran = f.read()
                os.remove(log_path)
                self.assertNotIn("Slow", ran)

    def test_ctest_costs_reads_the_record_up_to_the_failed_list(self):
        with tempfile.TemporaryDirectory() as build:
            os.makedirs(os.path.join(build, "Testing", "Temporary"))
            with open(os.path.join(build, "Testing", "Temporary", "CTestCostData.txt"), "w") as f:
                f.write("Suite.Slow 3 377.8\nF/P.Case/host  # GetParam() = 64-byte object <60-18> 1 0.5\n"
                        "---\nSuite.Failed\n")
            self.assertEqual(mutation.ctest_costs(build),
                             {"Suite.Slow": 377.8, "F/P.Case/host  # GetParam() = 64-byte object <60-18>": 0.5})
            self.assertEqual(mutation.ctest_costs(os.path.join(build, "none")), {})

    def test_run_together_ends_the_others_at_the_first_failure(self):
        with tempfile.TemporaryDirectory() as d:
            late = os.path.join(d, "late")
            t0 = time.time()
            rc, out, _ = mutation.run_together(
                [["sh", "-c", "sleep 1; touch " + late], ["sh", "-c", "echo broke; exit 3"]], None, 60, None)
            self.assertEqual((rc, out.strip()), (3, "broke"))
            self.assertLess(time.time() - t0, 1)  # did not wait for the sleeper
            time.sleep(1.5)
            self.assertFalse(os.path.exists(late))  # the sleeper was ended, not left running
        self.assertEqual(mutation.run_together([["true"], ["true"]], None, 60, None)[:2], (0, ""))
        self.assertEqual(mutation.run_together([["sleep", "30"], ["true"]], None, 1, None)[0], "timeout")


if __name__ == "__main__":
    unittest.main()
