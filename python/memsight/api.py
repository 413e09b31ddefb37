"""The Python API: each function runs the memsight CLI with ``--json`` and returns what it printed.

There is no second implementation here: every figure comes from the same Rust code as the app
and the CLI. Functions return plain dicts (the CLI's JSON documents, whose field names are a
contract), or pandas DataFrames with ``as_frame=True``.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any, Dict, List, Optional, Sequence, Union

from memsight._binary import find_binary

PathLike = Union[str, "os.PathLike[str]"]


class MemsightError(RuntimeError):
    """memsight could not do what was asked; ``str(e)`` is memsight's own message.

    ``returncode`` is the CLI's exit code and ``stderr`` everything it wrote there.
    """

    def __init__(self, message: str, returncode: int, stderr: str):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


def run(args: Sequence[str]) -> str:
    """Runs ``memsight ARGS`` and returns its standard output (UTF-8 text).

    Raises :class:`MemsightError` with memsight's message when it exits with an error.
    """
    exe = find_binary()
    proc = subprocess.run(
        [exe, *[os.fspath(a) for a in args]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        check=False,
    )
    out = proc.stdout.decode("utf-8", errors="replace")
    err = proc.stderr.decode("utf-8", errors="replace")
    if proc.returncode != 0:
        lines = [line for line in err.splitlines() if line.strip()]
        message = "\n".join(lines) if lines else "memsight exited with code %d" % proc.returncode
        if message.startswith("memsight: "):
            message = message[len("memsight: ") :]
        raise MemsightError(message, proc.returncode, err)
    return out


def _json(args: List[str]) -> Dict[str, Any]:
    out = run(args)
    try:
        return json.loads(out)
    except ValueError as e:
        shown = out.strip()[:200] or "nothing"
        raise MemsightError(
            "memsight printed something that is not JSON (%s): %s" % (e, shown), 0, ""
        ) from e


def _args(command: str, paths: Sequence[PathLike], **options: Any) -> List[str]:
    """``COMMAND --opt=value … -- PATH…``: each option as one ``--opt=value`` word (so a value
    such as ``-1`` is never read as a flag), ``True`` as a bare flag, ``None`` left out, and the
    paths after ``--`` (so a path such as ``--help`` or ``-x`` is never read as an option)."""
    args = [command]
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        args.append(flag if value is True else "%s=%s" % (flag, value))
    return args + ["--", *[os.fspath(p) for p in paths]]


def _pandas():
    try:
        import pandas  # noqa: PLC0415 (optional dependency, imported only when asked for)
    except ImportError as e:
        raise ImportError(
            "as_frame=True needs pandas: pip install pandas (or pip install 'memsight[pandas]')"
        ) from e
    return pandas


def inspect(path: PathLike, *, source: Optional[str] = None, as_frame: bool = False):
    """Every rank of a profile: counts, peaks, largest allocation, warnings.

    ``path`` is a profiling folder, a ``.db``, a PyTorch trace or an msMemScope dump.
    With ``as_frame=True``: one row per rank, peaks as ``<curve>_mib`` / ``<curve>_at_ms``.
    """
    doc = _json(_args("inspect", [path], source=source, json=True))
    if not as_frame:
        return doc
    rows = []
    for r in doc["ranks"]:
        row = {k: r.get(k) for k in ("rank", "device", "host", "source", "format", "dir", "unreleased")}
        for curve, peak in (r.get("peaks") or {}).items():
            row[curve + "_mib"] = peak["mib"] if peak else None
            row[curve + "_at_ms"] = peak["at_ms"] if peak else None
        for k, v in (r.get("counts") or {}).items():
            row["rows_" + k] = v
        largest = r.get("largest_allocation") or {}
        row["largest_name"] = largest.get("name")
        row["largest_kib"] = largest.get("size_kib")
        row["warnings"] = len(r.get("warnings") or [])
        rows.append(row)
    return _pandas().DataFrame(rows)


def steps(path: PathLike, rank=None, *, source: Optional[str] = None, as_frame: bool = False):
    """Each training step of one rank (default the device rank with the highest peak): peak, end value, survivors, growth.

    With ``as_frame=True``: one row per step (``survivors`` as ``survivors_count`` and
    ``survivors_kib``).
    """
    doc = _json(_args("steps", [path], rank=rank, source=source, json=True))
    if not as_frame:
        return doc
    rows = []
    for s in doc["steps"]:
        row = {k: v for k, v in s.items() if k != "survivors"}
        surv = s.get("survivors") or {}
        row["survivors_count"] = surv.get("count")
        row["survivors_kib"] = surv.get("kib")
        rows.append(row)
    return _pandas().DataFrame(rows)


def live(
    path: PathLike,
    at_ms: float,
    rank=None,
    *,
    top: int = 20,
    source: Optional[str] = None,
    as_frame: bool = False,
):
    """What is alive at ``at_ms`` (ms from the rank's time origin): totals, the largest blocks,
    the totals per operator.

    With ``as_frame=True``: the ``top`` largest blocks alive then, one row each.
    """
    doc = _json(
        _args(
            "live", [path], rank=rank, source=source, at_ms=repr(float(at_ms)), top=int(top), json=True
        )
    )
    if not as_frame:
        return doc
    return _pandas().DataFrame(doc["largest"])


def compare(
    a: PathLike,
    b: PathLike,
    *,
    rank_a=None,
    rank_b=None,
    source: Optional[str] = None,
    as_frame: bool = False,
):
    """Two ranks (of one profile or two runs): peak deltas and what each operator allocated.

    With ``as_frame=True``: one row per operator (``a_*``, ``b_*``, ``delta_*`` columns).
    """
    doc = _json(_args("compare", [a, b], rank_a=rank_a, rank_b=rank_b, source=source, json=True))
    if not as_frame:
        return doc
    return _pandas().DataFrame(doc["by_operator"])


def roles(path: PathLike, rank=None, *, source: Optional[str] = None, as_frame: bool = False):
    """Memory by training role (activations, gradients, optimizer state, inputs, temporaries) at
    the peak and at each step's peak, and what would lower the peak (``advice``).

    With ``as_frame=True``: one row per (step, role); the profile's peak has ``step`` None.
    """
    doc = _json(_args("roles", [path], rank=rank, source=source, json=True))
    if not as_frame:
        return doc
    rows = []
    peak = doc.get("at_peak")
    if peak:
        for r in peak["roles"]:
            rows.append({"step": None, "at_ms": peak["at_ms"], **r})
    for s in doc.get("per_step") or []:
        for r in s["roles"]:
            rows.append({"step": s["step"], "at_ms": s["peak_at_ms"], **r})
    return _pandas().DataFrame(rows, columns=["step", "at_ms", "role", "mib", "blocks"])
