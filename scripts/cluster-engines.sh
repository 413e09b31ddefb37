#!/usr/bin/env bash
# memsight.cluster on real engines: a venv with Ray and Dask (from PyPI), then the fan-out on a
# local Ray cluster and a Dask LocalCluster (started and stopped by the tests), each of which
# must give the same bytes as one `memsight summarize` (python/tests/test_cluster.py).
# Not in CI (Ray alone is a 70 MB download and a 20 s start on 2 cores); run it by hand:
#   bash scripts/cluster-engines.sh [MEMSIGHT_BINARY]   (default: target/release/memsight)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/memsight}")
venv=${MEMSIGHT_ENGINES_VENV:-target/engines-venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "ray[default]" "dask[distributed]"
fi
"$venv/bin/python" -c 'import ray, dask, distributed; print("ray", ray.__version__, "dask", dask.__version__, "distributed", distributed.__version__)'
MEMSIGHT_BIN="$bin" PYTHONPATH=python:python/tests MEMSIGHT_PANDAS_OPTIONAL=1 \
  timeout 900 "$venv/bin/python" -m unittest -v engines_test
