"""memsight: memory profiles of Ascend NPU and PyTorch training, in a desktop viewer and a CLI.

``pip install memsight`` puts the ``memsight`` command on PATH (the app on a desktop, the whole
CLI everywhere; ``python -m memsight`` is the same). This package is a small API over that CLI's
JSON, for notebooks and scripts::

    import memsight
    memsight.inspect("run1/")                    # every rank's peaks, as a dict
    memsight.steps("run1/", rank=3, as_frame=True)  # a pandas DataFrame, one row per step
    memsight.live("run1/", at_ms=1250.0)          # what is alive then
    memsight.compare("baseline/", "run1/")
    memsight.roles("trace.pt.trace.json.gz")      # activations, gradients, optimizer state…
    memsight.explain("run1/")                    # one verdict: peak, made of, leak, OOM, what-if
    memsight.modules("trace.pt.trace.json.gz")    # which nn.Module holds the peak
    memsight.stacks("run1/", by="line")           # which Python lines hold it
    memsight.whatif("trace.pt.trace.json.gz", micro_batch=2)   # will it fit?
    memsight.snapshot("oom_snapshot.pickle")      # an allocator snapshot: why it ran out

Errors raise :class:`MemsightError` carrying memsight's message. A many-rank job is summarised
where its data lives with :func:`memsight.cluster.summarize` (local processes, Ray or Dask).
"""

from __future__ import annotations

from memsight import cluster
from memsight._binary import BinaryNotFound, find_binary
from memsight.api import (
    MemsightError,
    compare,
    explain,
    inspect,
    live,
    modules,
    roles,
    run,
    snapshot,
    stacks,
    steps,
    whatif,
)

try:
    from importlib.metadata import PackageNotFoundError, version

    try:
        __version__ = version("memsight")
    except PackageNotFoundError:  # run from a source checkout
        __version__ = "0+unknown"
except ImportError:  # Python < 3.8
    __version__ = "0+unknown"

__all__ = [
    "BinaryNotFound",
    "MemsightError",
    "cluster",
    "compare",
    "explain",
    "find_binary",
    "inspect",
    "live",
    "modules",
    "roles",
    "run",
    "snapshot",
    "stacks",
    "steps",
    "whatif",
    "__version__",
]
