"""memsight.cluster on Ray and Dask: a local Ray cluster and a Dask LocalCluster (started and
stopped by the test) each give the same bytes as one `memsight summarize` of the same ranks.
Not discovered by the default suite (its name does not match test*.py): Ray and Dask are not
installed in CI. scripts/cluster-engines.sh makes a venv with both and runs it."""

from __future__ import annotations

import unittest

from test_cluster import ClusterTest


class EnginesTest(ClusterTest):
    def test_dask_local_cluster_gives_the_same_bytes(self):
        self.check_engine("dask")

    def test_ray_local_cluster_gives_the_same_bytes(self):
        self.check_engine("ray")


if __name__ == "__main__":
    unittest.main()
