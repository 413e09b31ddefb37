"""Tests of memsight.cluster on the local engine: the fan-out gives the same file as one
`memsight summarize` of the same ranks (compared byte for byte) and records ranks whose tasks
fail. Ray and Dask: test_engines.py, run by scripts/cluster-engines.sh."""

from __future__ import annotations

import glob
import os
import sqlite3
import tempfile
import unittest

import memsight
from memsight import cluster

ROOT = os.environ.get("MEMSIGHT_REPO") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RANKS = os.path.join(ROOT, "fixtures", "torch_cluster", "*_ascend_pt")
TRACES = os.path.join(ROOT, "fixtures", "pytorch", "roles")


def rows(db, sql):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


class ClusterTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="memsight-cluster-test-")
        self.paths = sorted(glob.glob(RANKS)) + [TRACES]
        # The reference: one memsight process over every path.
        self.reference = os.path.join(self.dir, "reference.db")
        memsight.run(["summarize", *self.paths, "--out", self.reference])

    def tearDown(self):
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)

    def read(self, path):
        with open(path, "rb") as f:
            return f.read()

    def check_engine(self, engine, **kwargs):
        out = os.path.join(self.dir, engine + ".db")
        seen = []
        result = cluster.summarize(
            [RANKS, TRACES], out, engine=engine, workers=2, progress=lambda k, n: seen.append((k, n)), **kwargs
        )
        self.assertEqual(result["ranks"], 5)
        self.assertEqual(result["failed"], [])
        tasks = -(-len(self.paths) // kwargs.get("batch", 1))
        self.assertEqual(seen[-1], (tasks, tasks))
        self.assertEqual(self.read(out), self.read(self.reference), "%s differs from one summarize" % engine)

    def test_local_gives_the_file_of_one_summarize(self):
        self.check_engine("local")

    def test_local_in_batches(self):
        self.check_engine("local", batch=2)

    def test_a_task_that_keeps_failing_is_recorded(self):
        real = cluster.summarize_task
        calls = []

        def flaky(paths, source=None, retries=2):
            calls.append(list(paths))
            if any(p.endswith("roles") for p in paths):
                return (list(paths), None, "worker lost")
            return real(paths, source, retries)

        cluster.summarize_task = flaky
        try:
            out = os.path.join(self.dir, "flaky.db")
            result = cluster.summarize([RANKS, TRACES], out, workers=2, progress=False)
        finally:
            cluster.summarize_task = real
        self.assertEqual(result["failed"], [(TRACES, "worker lost")])
        self.assertEqual(
            rows(out, "SELECT path, error FROM ranks WHERE error IS NOT NULL"), [(TRACES, "worker lost")]
        )
        self.assertEqual(rows(out, "SELECT count(*) FROM ranks WHERE error IS NULL"), [(2,)])

    def test_a_glob_matching_nothing_is_an_error(self):
        with self.assertRaises(memsight.MemsightError):
            cluster.summarize(os.path.join(self.dir, "nothing*"), os.path.join(self.dir, "x.db"))
        with self.assertRaises(ValueError):
            cluster.summarize(TRACES, os.path.join(self.dir, "x.db"), engine="spark")


if __name__ == "__main__":
    unittest.main()


class MainGuardTest(unittest.TestCase):
    """A script that calls ``summarize`` at its top level runs again in each worker process
    that multiprocessing's spawn starts (Dask's and Ray's local workers): there the call stops
    at once and says to use ``if __name__ == "__main__":``, instead of starting a cluster."""

    def test_a_top_level_call_in_a_spawned_worker_says_to_guard_it(self):
        import subprocess
        import sys

        tmp = tempfile.mkdtemp(prefix="memsight-guard-test-")
        script = os.path.join(tmp, "job.py")
        with open(script, "w") as f:
            f.write(
                "import multiprocessing as mp\n"
                "from memsight import cluster\n"
                "if __name__ == '__mp_main__':\n"
                "    try:\n"
                "        cluster.summarize([], 'x.db', engine='dask')\n"
                "        print('NOT REFUSED', flush=True)\n"
                "    except RuntimeError as e:\n"
                "        print('REFUSED: %s' % e, flush=True)\n"
                "def noop():\n"
                "    pass\n"
                "if __name__ == '__main__':\n"
                "    p = mp.get_context('spawn').Process(target=noop)\n"
                "    p.start()\n"
                "    p.join()\n"
            )
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(cluster.__file__)), env.get("PYTHONPATH", "")] if p)
        done = subprocess.run([sys.executable, script], cwd=tmp, env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("REFUSED:", done.stdout, done.stdout + done.stderr)
        self.assertIn('if __name__ == "__main__":', done.stdout)
        self.assertNotIn("NOT REFUSED", done.stdout)
        # Nothing was written where the script ran.
        self.assertEqual(sorted(os.listdir(tmp)), ["job.py"])

    def test_the_main_process_is_not_refused(self):
        self.assertFalse(cluster._in_spawned_reimport())

