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
    """Each training step of one rank (default: the device rank with the highest peak, as
    every function here): peak, end value, survivors, growth.

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


def explain(path: PathLike, rank=None, *, source: Optional[str] = None) -> Dict[str, Any]:
    """One verdict on a profile, an allocator snapshot (``.pickle``) or a cluster summary
    (``.db`` from ``memsight summarize``): the peak, what it is made of, the leak and OOM
    verdicts with advice that follows them, and the replayed what-if levers (under 5 KB).
    """
    return _json(_args("explain", [path], rank=rank, source=source, json=True))


def modules(
    path: PathLike,
    rank=None,
    *,
    at_ms: Optional[float] = None,
    source: Optional[str] = None,
    as_frame: bool = False,
):
    """Memory by ``nn.Module`` at the peak (or at ``at_ms``): what each holds, itself and through
    its children, and what it allocated in forward and backward.

    With ``as_frame=True``: one row per module.
    """
    at = None if at_ms is None else repr(float(at_ms))
    doc = _json(_args("modules", [path], rank=rank, source=source, at_ms=at, json=True))
    if not as_frame:
        return doc
    return _pandas().DataFrame(doc["modules"])


def stacks(
    path: PathLike,
    rank=None,
    *,
    by: str = "stack",
    at_ms: Optional[float] = None,
    from_ms: Optional[float] = None,
    to_ms: Optional[float] = None,
    top: int = 20,
    source: Optional[str] = None,
    as_frame: bool = False,
):
    """Memory by call stack, source line, host op or role (``by``: ``stack``, ``line``, ``op``,
    ``role``), over the run, a window or alive at ``at_ms``.

    With ``as_frame=True``: one row per group.
    """
    ms = lambda v: None if v is None else repr(float(v))  # noqa: E731
    doc = _json(
        _args(
            "stacks",
            [path],
            rank=rank,
            source=source,
            by=by,
            at_ms=ms(at_ms),
            from_ms=ms(from_ms),
            to_ms=ms(to_ms),
            top=int(top),
            json=True,
        )
    )
    if not as_frame:
        return doc
    return _pandas().DataFrame(doc["items"])


def whatif(
    path: PathLike,
    rank=None,
    *,
    micro_batch: Optional[float] = None,
    checkpoint: Optional[str] = None,
    zero: Optional[int] = None,
    ranks: Optional[int] = None,
    offload_optimizer: bool = False,
    batch_size: Optional[int] = None,
    capacity_gib: Optional[float] = None,
    source: Optional[str] = None,
) -> Dict[str, Any]:
    """The peak replayed from the measured run with a lever: ``micro_batch`` (a multiple of the
    profiled one) or ``batch_size`` (a size, when the trace records the profiled one),
    ``checkpoint`` (a module class or glob), ZeRO ``zero`` over ``ranks``, or
    ``offload_optimizer``. ``fit`` says the card's capacity (``capacity_gib``, else the
    trace's record), the predicted reserved peak and the headroom.
    """
    return _json(
        _args(
            "whatif",
            [path],
            rank=rank,
            source=source,
            micro_batch=None if micro_batch is None else repr(float(micro_batch)),
            checkpoint=checkpoint,
            zero=zero,
            ranks=ranks,
            offload_optimizer=offload_optimizer,
            batch_size=batch_size,
            capacity_gib=None if capacity_gib is None else repr(float(capacity_gib)),
            json=True,
        )
    )


def snapshot(
    path: PathLike,
    *,
    at_event: Optional[int] = None,
    device: Optional[int] = None,
    profile: Optional[PathLike] = None,
    top: int = 20,
) -> Dict[str, Any]:
    """An allocator snapshot (``.pickle`` from ``torch.cuda.memory._dump_snapshot`` or
    torch_npu's): each device's peak, the OOM verdict and its advice, fragmentation by cause,
    who holds the memory; with ``profile`` (a trace of the same run), by operator and step.
    """
    return _json(
        _args(
            "snapshot",
            [path],
            at_event=at_event,
            device=device,
            profile=None if profile is None else os.fspath(profile),
            top=int(top),
            json=True,
        )
    )
