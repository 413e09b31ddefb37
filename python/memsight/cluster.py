"""Summarising a many-rank job where its data lives, on the engine the cluster already runs.

``summarize(paths, out, engine=...)`` runs ``memsight summarize`` over the ranks as tasks of a
local process pool, Ray or Dask, then merges the per-task summaries into ``out`` with
``memsight summarize --merge``. Each task reads its ranks on the worker that runs it and sends
back only its summary file's bytes (a few hundred KB a rank), so what crosses the network is
the summaries, never the profiles. A task that fails is retried; a rank whose task keeps failing
is recorded in the summary with its error (``memsight summarize --failed``), not lost.

Every engine gives the same bytes for the same ranks: the merge orders ranks by identity.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Callable, Iterable, List, Optional, Sequence, Tuple, Union

from memsight.api import MemsightError, _args, run

ENGINES = ("local", "ray", "dask")

#: What a task returns: (its paths, the summary file's bytes or None, the error or None).
TaskResult = Tuple[List[str], Optional[bytes], Optional[str]]


def expand(paths: Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]) -> List[str]:
    """The rank folders (or files) named by ``paths``: a path, a glob pattern, or a list of
    either; sorted, duplicates removed. A pattern that matches nothing is an error."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found = []
    for p in paths:
        p = os.fspath(p)
        if glob.has_magic(p):
            matched = sorted(glob.glob(p))
            if not matched:
                raise MemsightError("%s matches nothing" % p, 2, "")
            found.extend(matched)
        else:
            found.append(p)
    return sorted(set(found))


def summarize_task(paths: Sequence[str], source: Optional[str] = None, retries: int = 2) -> TaskResult:
    """One task: ``memsight summarize PATHS`` on this machine, retried up to ``retries`` times
    when the process itself fails; returns the summary's bytes, or the last error.

    Runs on a worker (a process, a Ray task, a Dask future): it needs the memsight executable
    there, which ``pip install memsight`` on the cluster's Python environment provides.
    """
    paths = [os.fspath(p) for p in paths]
    error = None
    for attempt in range(retries + 1):
        tmp = tempfile.mkdtemp(prefix="memsight-task-")
        try:
            out = os.path.join(tmp, "part.db")
            run(_args("summarize", paths, out=out, source=source))
            with open(out, "rb") as f:
                return (paths, f.read(), None)
        except (MemsightError, OSError) as e:
            error = str(e)
            time.sleep(min(0.2 * (attempt + 1), 1.0))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return (paths, None, error)


#: What to do when a script calls :func:`summarize` at its top level and Dask or Ray start
#: worker processes, which import that script again (multiprocessing's spawn).
MAIN_GUARD_HINT = (
    'Dask and Ray start worker processes that import your script again: call '
    'memsight.cluster.summarize under `if __name__ == "__main__":` (or from a function that '
    "only the main block calls)."
)


def _in_spawned_reimport() -> bool:
    """True in a worker process that multiprocessing's spawn started while it runs the user's
    script again (as ``__mp_main__``): a top-level call there would start another cluster."""
    import multiprocessing

    # While a spawned child imports the parent's main module, multiprocessing marks the process
    # as inheriting (what its own "bootstrapping phase" error checks) and names it __mp_main__.
    main = sys.modules.get("__main__")
    inheriting = getattr(multiprocessing.current_process(), "_inheriting", False)
    return bool(inheriting) or getattr(main, "__name__", "") == "__mp_main__"


def _main_is_a_script() -> bool:
    """True when the program is a script file (not ``python -c``, a notebook or a REPL)."""
    return bool(getattr(sys.modules.get("__main__"), "__file__", None))


def _batches(paths: List[str], batch: int) -> List[List[str]]:
    batch = max(1, int(batch))
    return [paths[i : i + batch] for i in range(0, len(paths), batch)]


def _run_local(batches, workers, source, retries, done):
    from concurrent.futures import ThreadPoolExecutor, as_completed

    # Threads are enough: each task is a memsight process.
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        futures = [pool.submit(summarize_task, b, source, retries) for b in batches]
        for f in as_completed(futures):
            done(f.result())


def _run_ray(batches, workers, source, retries, address, done):
    try:
        import ray
    except ImportError as e:
        raise ImportError('engine="ray" needs Ray: pip install "ray[default]"') from e
    started = not ray.is_initialized()
    if started:
        kwargs = {"address": address} if address else {"num_cpus": workers or os.cpu_count()}
        ray.init(ignore_reinit_error=True, log_to_driver=False, include_dashboard=False, **kwargs)
    try:
        # Ray retries a task whose worker died; summarize_task retries a failing memsight.
        task = ray.remote(num_cpus=1, max_retries=retries)(summarize_task)
        pending = [task.remote(b, source, retries) for b in batches]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for r in ready:
                try:
                    done(ray.get(r))
                except Exception as e:  # the task itself failed every retry
                    done(([], None, "ray: %s" % e))
    finally:
        if started:
            ray.shutdown()


def _run_dask(batches, workers, source, retries, address, done):
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as e:
        raise ImportError('engine="dask" needs Dask: pip install "dask[distributed]"') from e
    cluster = None
    if address:
        client = Client(address)
    else:
        try:
            cluster = LocalCluster(
                n_workers=workers or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
        except Exception as e:
            # Its workers failed to start: in a script without the main guard they ran the
            # script again and stopped at this call.
            if _main_is_a_script():
                raise RuntimeError("%s\n%s" % (e, MAIN_GUARD_HINT)) from e
            raise
        client = Client(cluster)
    try:
        # Dask retries a task whose worker died (`retries=`); summarize_task retries a failing
        # memsight (its third argument).
        futures = [
            client.submit(summarize_task, b, source, retries, pure=False, retries=retries)
            for b in batches
        ]
        for f in as_completed(futures):
            try:
                done(f.result())
            except Exception as e:  # the task itself failed every retry
                done(([], None, "dask: %s" % e))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def summarize(
    paths,
    out: Union[str, "os.PathLike[str]"],
    engine: str = "local",
    workers: Optional[int] = None,
    address: Optional[str] = None,
    batch: int = 1,
    retries: int = 2,
    source: Optional[str] = None,
    progress: Union[bool, Callable[[int, int], None]] = True,
) -> dict:
    """Summarises every rank of ``paths`` (a path, a glob such as ``"/data/job/*_ascend_pt"``,
    or a list) into the summary file ``out``, with ``batch`` paths per task.

    ``engine``: ``"local"`` (a pool of ``workers`` memsight processes on this machine),
    ``"ray"`` or ``"dask"`` (a local cluster of ``workers``, or the running cluster at
    ``address``: ``"auto"`` or ``"ray://head:10001"`` for Ray, ``"tcp://scheduler:8786"`` for
    Dask). ``progress``: True prints ``k/n tasks`` to stderr; a callable gets ``(k, n)``.

    Returns ``{"out", "ranks", "failed": [(path, error)], "seconds"}``; raises
    :class:`MemsightError` when the merge fails.
    """
    if engine not in ENGINES:
        raise ValueError("engine must be one of %s, not %r" % (", ".join(ENGINES), engine))
    if _in_spawned_reimport():
        raise RuntimeError(
            "memsight.cluster.summarize was called while a worker process imported the script "
            "again. " + MAIN_GUARD_HINT
        )
    out = os.path.abspath(os.fspath(out))
    all_paths = expand(paths)
    batches = _batches(all_paths, batch)
    started = time.monotonic()
    parts_dir = tempfile.mkdtemp(prefix="memsight-parts-")
    parts: List[str] = []
    failed: List[Tuple[str, str]] = []
    count = [0]

    def done(result: TaskResult) -> None:
        task_paths, data, error = result
        count[0] += 1
        if data is not None:
            part = os.path.join(parts_dir, "part-%06d.db" % len(parts))
            with open(part, "wb") as f:
                f.write(data)
            parts.append(part)
        else:
            failed.extend((p, error or "failed") for p in task_paths)
        if callable(progress):
            progress(count[0], len(batches))
        elif progress:
            print("memsight: %d/%d tasks" % (count[0], len(batches)), file=sys.stderr)

    try:
        if engine == "local":
            _run_local(batches, workers, source, retries, done)
        elif engine == "ray":
            _run_ray(batches, workers, source, retries, address, done)
        else:
            _run_dask(batches, workers, source, retries, address, done)
        # The ranks whose tasks kept failing, recorded with their errors.
        by_error = {}
        for p, e in failed:
            by_error.setdefault(e, []).append(p)
        for e, ps in sorted(by_error.items()):
            part = os.path.join(parts_dir, "part-%06d.db" % len(parts))
            run(_args("summarize", ps, failed=e, out=part))
            parts.append(part)
        if not parts:
            raise MemsightError("nothing to summarize", 2, "")
        run(_args("summarize", sorted(parts), merge=True, out=out))
    finally:
        shutil.rmtree(parts_dir, ignore_errors=True)
    import pathlib
    import sqlite3

    db = sqlite3.connect(pathlib.Path(out).as_uri() + "?mode=ro", uri=True)
    try:
        ranks = db.execute("SELECT count(*) FROM ranks").fetchone()[0]
    finally:
        db.close()
    return {
        "out": out,
        "ranks": ranks,
        "failed": failed,
        "seconds": time.monotonic() - started,
    }


__all__ = ["ENGINES", "expand", "summarize", "summarize_task"]
