"""Tests of the Python API against values computed here from the raw files (csv and json
modules of the standard library), not from what memsight printed.

Run from the repository root: ``python3 -m unittest discover -s python/tests``, with the package
importable (installed, or ``PYTHONPATH=python``) and the executable found (installed beside it,
or ``MEMSIGHT_BIN``). ``cargo test --release`` runs this through ``tests/python_api.rs``.
Without pandas the ``as_frame`` tests fail unless ``MEMSIGHT_PANDAS_OPTIONAL=1`` is set.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
import sys
import unittest

import memsight

ROOT = os.environ.get("MEMSIGHT_REPO") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TORCH = os.path.join(ROOT, "fixtures", "torch_crlf")
TORCH_OUT = os.path.join(TORCH, "node0_4000_20261121000000000_ascend_pt", "ASCEND_PROFILER_OUTPUT")
TRACE = os.path.join(ROOT, "fixtures", "pytorch", "roles", "cnn_adam.pt.trace.json.gz")
DEMO_LIKE = os.path.join(ROOT, "fixtures", "torch_cluster")

try:
    import pandas  # noqa: F401

    HAVE_PANDAS = True
except ImportError:
    HAVE_PANDAS = False


def need_pandas(test):
    """Runs the test with pandas; without it, a failure unless MEMSIGHT_PANDAS_OPTIONAL=1."""
    if HAVE_PANDAS or os.environ.get("MEMSIGHT_PANDAS_OPTIONAL") != "1":
        return test
    return unittest.skip("pandas is not installed (MEMSIGHT_PANDAS_OPTIONAL=1)")(test)


def memory_record():
    with open(os.path.join(TORCH_OUT, "memory_record.csv"), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def operator_memory():
    with open(os.path.join(TORCH_OUT, "operator_memory.csv"), newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def num(cell):
    cell = (cell or "").strip()
    return float(cell) if cell else None


def trace_events():
    with gzip.open(TRACE, "rt", encoding="utf-8") as f:
        return json.load(f)["traceEvents"]


class InspectTest(unittest.TestCase):
    def test_peaks_are_the_maxima_of_the_raw_curves(self):
        rows = memory_record()
        allocated = max(num(r["Total Allocated(MB)"]) for r in rows if r["Component"] == "PTA+GE")
        app = max(num(r["Total Reserved(MB)"]) for r in rows if r["Component"] == "APP")
        doc = memsight.inspect(TORCH)
        (rank,) = doc["ranks"]
        self.assertAlmostEqual(rank["peaks"]["operator_allocated"]["mib"], allocated, places=6)
        self.assertAlmostEqual(rank["peaks"]["app_reserved"]["mib"], app, places=6)
        self.assertEqual(rank["counts"]["memory_record"], len(rows))
        self.assertEqual(rank["counts"]["operator_memory"], len(operator_memory()))

    def test_a_path_object_works_like_a_string(self):
        import pathlib

        self.assertEqual(memsight.inspect(pathlib.Path(TORCH)), memsight.inspect(TORCH))

    @need_pandas
    def test_as_frame_has_a_row_per_rank(self):
        frame = memsight.inspect(DEMO_LIKE, as_frame=True)
        doc = memsight.inspect(DEMO_LIKE)
        self.assertEqual(list(frame["rank"]), [r["rank"] for r in doc["ranks"]])
        self.assertEqual(
            list(frame["operator_allocated_mib"]),
            [r["peaks"]["operator_allocated"]["mib"] for r in doc["ranks"]],
        )


class StepsTest(unittest.TestCase):
    def test_one_step_per_profiler_step_span(self):
        spans = {e["name"] for e in trace_events() if e.get("name", "").startswith("ProfilerStep#")}
        doc = memsight.steps(TRACE)
        self.assertEqual(len(doc["steps"]), len(spans))
        self.assertEqual(doc["source"], "pytorch_trace")

    @need_pandas
    def test_as_frame_flattens_the_survivors(self):
        frame = memsight.steps(TRACE, as_frame=True)
        doc = memsight.steps(TRACE)
        self.assertEqual(len(frame), len(doc["steps"]))
        self.assertEqual(list(frame["survivors_count"]), [s["survivors"]["count"] for s in doc["steps"]])


class LiveTest(unittest.TestCase):
    def test_the_live_blocks_are_those_of_operator_memory_alive_then(self):
        origin_us = memsight.inspect(TORCH)["ranks"][0]["time_origin_ns"] / 1000.0
        at_ms = 0.86
        t = origin_us + at_ms * 1000.0
        alive = 0.0
        for r in operator_memory():
            start, end = num(r["Allocation Time(us)"]), num(r["Release Time(us)"])
            if start is not None and start <= t and (end is None or end > t):
                alive += num(r["Size(KB)"])
        doc = memsight.live(TORCH, at_ms=at_ms, top=3)
        self.assertAlmostEqual(doc["blocks_mib"], alive / 1024.0, places=3)
        self.assertLessEqual(len(doc["largest"]), 3)

    @need_pandas
    def test_as_frame_lists_the_largest_blocks(self):
        frame = memsight.live(TORCH, at_ms=0.86, top=5, as_frame=True)
        self.assertEqual(len(frame), 5)
        self.assertTrue((frame["size_kib"].diff().dropna() <= 0).all())


class CompareTest(unittest.TestCase):
    def test_the_delta_is_b_minus_a(self):
        a = memsight.inspect(TORCH)["ranks"][0]["peaks"]["operator_allocated"]["mib"]
        b = memsight.inspect(DEMO_LIKE)["ranks"][0]["peaks"]["operator_allocated"]["mib"]
        doc = memsight.compare(TORCH, DEMO_LIKE)
        self.assertAlmostEqual(doc["delta"]["operator_allocated_mib"], b - a, places=6)

    @need_pandas
    def test_as_frame_has_a_row_per_operator(self):
        frame = memsight.compare(TORCH, DEMO_LIKE, as_frame=True)
        # Every allocation of A (the fixture's one free without an allocation has no name and
        # a negative size: it is not a block) is in its operator's row.
        blocks = [r for r in operator_memory() if r["Name"].strip() and num(r["Size(KB)"]) > 0]
        self.assertEqual(set(frame["name"]) >= {r["Name"] for r in blocks}, True)
        self.assertEqual(int(frame["a_blocks"].sum()), len(blocks))
        self.assertAlmostEqual(float(frame["a_kib"].sum()), sum(num(r["Size(KB)"]) for r in blocks), places=3)


class RolesTest(unittest.TestCase):
    def test_every_role_is_one_of_the_eight(self):
        doc = memsight.roles(TRACE)
        known = {
            "before_profiling", "parameter", "optimizer_state", "gradient", "input",
            "activation", "backward_temporary", "temporary", "unknown",
        }
        self.assertTrue({r["role"] for r in doc["at_peak"]["roles"]} <= known)
        self.assertTrue(doc["advice"])

    @need_pandas
    def test_as_frame_has_a_row_per_step_and_role(self):
        doc = memsight.roles(TRACE)
        frame = memsight.roles(TRACE, as_frame=True)
        expected = len(doc["at_peak"]["roles"]) + sum(len(s["roles"]) for s in doc["per_step"])
        self.assertEqual(len(frame), expected)


GPU = os.path.join(ROOT, "fixtures", "pytorch", "whatif_cuda")


def torch_max_allocated(run):
    """PyTorch's own ``torch.cuda.max_memory_allocated`` of a fixture run, MiB."""
    with open(os.path.join(GPU, "truth.json"), encoding="utf-8") as f:
        return json.load(f)["runs"][run]["max_allocated"] / 1048576.0


class DefaultRankTest(unittest.TestCase):
    """Without ``rank``, a GPU trace answers about its device rank, not its CPU pseudo-rank."""

    def test_roles_and_whatif_answer_about_the_gpu(self):
        trace = os.path.join(GPU, "gpu.pt.trace.json.gz")
        self.assertEqual(memsight.roles(trace)["rank"], "gpu cuda:0")
        doc = memsight.whatif(trace, micro_batch=2)
        self.assertEqual(doc["rank"], "gpu cuda:0")
        want = torch_max_allocated("gpu")
        self.assertLess(abs(doc["measured"]["peak_mib"] - want) / want, 0.005)
        self.assertGreater(doc["predicted"]["peak_mib"], doc["measured"]["peak_mib"])


class MoreCommandsTest(unittest.TestCase):
    """explain, modules, stacks, whatif and snapshot, as the CLI answers them."""

    def test_explain_gives_the_raw_peak(self):
        rows = memory_record()
        allocated = max(num(r["Total Allocated(MB)"]) for r in rows if r["Component"] == "PTA+GE")
        doc = memsight.explain(TORCH)
        self.assertEqual(doc["kind"], "profile")
        self.assertAlmostEqual(doc["peak"]["mib"], allocated, places=6)

    def test_modules_and_stacks_of_a_trace(self):
        doc = memsight.modules(TRACE)
        self.assertTrue(doc["modules"])
        by_line = memsight.stacks(TRACE, by="line", top=3)
        self.assertEqual(by_line["by"], "line")
        self.assertLessEqual(len(by_line["items"]), 3)
        with self.assertRaises(memsight.MemsightError):
            memsight.stacks(TRACE, by="file")

    def test_whatif_offload_lowers_the_peak_by_the_optimizer_state(self):
        doc = memsight.whatif(TRACE, offload_optimizer=True)
        self.assertLessEqual(doc["predicted"]["peak_mib"], doc["measured"]["peak_mib"])
        self.assertTrue(doc["scenario"]["offload_optimizer"])

    def test_snapshot_of_a_recorded_run(self):
        pickle = os.path.join(ROOT, "fixtures", "snapshots", "cuda_join", "run.pickle")
        trace = os.path.join(ROOT, "fixtures", "snapshots", "cuda_join", "run.pt.trace.json.gz")
        doc = memsight.snapshot(pickle, top=3, profile=trace)
        self.assertTrue(doc["devices"])
        self.assertIsNotNone(doc["profile_join"])


class ErrorsTest(unittest.TestCase):
    def test_a_missing_path_raises_memsights_message(self):
        with self.assertRaises(memsight.MemsightError) as caught:
            memsight.inspect(os.path.join(ROOT, "no such folder"))
        self.assertIn("no such folder", str(caught.exception))
        self.assertNotEqual(caught.exception.returncode, 0)
        self.assertFalse(str(caught.exception).startswith("memsight: "))

    def test_a_chinese_path_round_trips(self):
        with self.assertRaises(memsight.MemsightError) as caught:
            memsight.steps(os.path.join(ROOT, "没有这个目录"))
        self.assertIn("没有这个目录", str(caught.exception))


class ArgumentsTest(unittest.TestCase):
    """Issue 41 item 14: paths and values that look like flags reach memsight as they are."""

    def test_a_path_that_looks_like_a_flag_is_a_path(self):
        import shutil
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            for name in ("--help", "-x"):
                with self.assertRaises(memsight.MemsightError) as caught:
                    memsight.inspect(name)  # relative: no such folder here
                self.assertIn(name, str(caught.exception))
            # A real profile under such a name opens.
            copy = os.path.join(tmp, "-run")
            shutil.copytree(TORCH, copy)
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                doc = memsight.inspect("-run")
            finally:
                os.chdir(cwd)
            self.assertEqual(len(doc["ranks"]), 1)

    def test_a_negative_rank_is_a_value(self):
        with self.assertRaises(memsight.MemsightError) as caught:
            memsight.steps(DEMO_LIKE, rank=-1)
        self.assertIn('unknown rank "-1"', str(caught.exception))

    def test_output_that_is_not_json_raises_memsights_error(self):
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "memsight")
            with open(fake, "w", encoding="utf-8") as f:
                f.write("#!/bin/sh\necho 'not json'\n")
            os.chmod(fake, 0o755)
            old = os.environ.get("MEMSIGHT_BIN")
            os.environ["MEMSIGHT_BIN"] = fake
            try:
                with self.assertRaises(memsight.MemsightError) as caught:
                    memsight.inspect(TORCH)
            finally:
                if old is None:
                    del os.environ["MEMSIGHT_BIN"]
                else:
                    os.environ["MEMSIGHT_BIN"] = old
            self.assertIn("not JSON", str(caught.exception))


class CommandTest(unittest.TestCase):
    def test_python_dash_m_runs_the_binary(self):
        out = subprocess.run(
            [sys.executable, "-m", "memsight", "--version"], stdout=subprocess.PIPE, check=True
        ).stdout.decode()
        with open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8") as f:
            version = next(line.split('"')[1] for line in f if line.startswith("version"))
        self.assertEqual(out.strip(), "memsight " + version)

    def test_a_missing_memsight_bin_is_an_error_not_a_fallback(self):
        from unittest import mock

        with mock.patch.dict(os.environ, {"MEMSIGHT_BIN": os.path.join(ROOT, "no", "memsight")}):
            with self.assertRaises(memsight.BinaryNotFound) as caught:
                memsight.find_binary()
        self.assertIn("MEMSIGHT_BIN", str(caught.exception))

    def test_the_binary_is_found(self):
        self.assertTrue(os.path.isfile(memsight.find_binary()))


if __name__ == "__main__":
    unittest.main()
