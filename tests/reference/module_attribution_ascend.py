"""Memory by module, by brute force over a raw torch_npu export (ASCEND_PROFILER_OUTPUT): the
reference that `memsight modules` is checked against on Ascend data (tests/cli/cli_modules.rs).
No memsight code.

    python3 tests/reference/module_attribution_ascend.py ASCEND_PROFILER_OUTPUT [AT_MS]
    python3 tests/reference/module_attribution_ascend.py ascend_pytorch_profiler_N.db [AT_MS]

The rules, as the brief states them, over what torch_npu writes:
- the blocks are the rows of `operator_memory.csv` (Size(KB) × 1024 bytes, allocated at
  Allocation Time(us), freed at Release Time(us), never when it is empty); alive at T means
  allocated at or before T and freed after it;
- times are counted from the first `Timestamp(us)` of `memory_record.csv`; T is AT_MS after it,
  else the first time the blocks' live total reaches its maximum;
- operator_memory does not say which thread allocated: a block's op is the `cpu_op` of
  `trace_view.json` containing its allocation time that started last (ties: the shorter), on
  whatever thread;
- the block belongs to the modules whose forward span (`python_function` named `nn.Module: X`)
  was open on that op's thread when the op started, except when the op runs inside a backward
  op the profiler linked to its forward op (a `fwdbwd` flow): then to the modules open when
  that forward op started, on its thread;
- a module's held bytes are those of the alive blocks attributed to it or to a module under it
  (modules are named by their path from the top: `AlexNet_0/Sequential_0/Conv2d_0`).

The DB export holds the same in tables: the blocks are `OP_MEMORY` rows (size in bytes, times
in ns), the origin is the first time of `MEMORY_RECORD` and `NPU_MEM`, the ops are the `PYTORCH_API` rows of
type `op` and the module spans its rows named `nn.Module: X`; a forward op and its backward
nodes share a value of `CONNECTION_IDS` (through their `connectionId`), the earliest of them
being the forward op.

Prints the same JSON as module_attribution.py.
"""
import collections
import csv
import decimal
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from module_attribution import PREFIX, host_spans, load  # noqa: E402


def us(text):
    return int(decimal.Decimal(text.strip()) * 1000)


def from_text(folder):
    """(ops by thread, module spans by thread, {backward op: (forward thread, forward start)},
    blocks, origin) of an ASCEND_PROFILER_OUTPUT folder."""
    ops, modules, flows = host_spans(load(os.path.join(folder, "trace_view.json")))
    backward_of = {}  # backward op index -> (forward thread, forward op start)
    for f in flows.values():
        if "s" in f and "f" in f:
            fwd, bwd = ops_at(ops, *f["s"]), ops_at(ops, *f["f"])
            if fwd and bwd:
                backward_of[bwd[0][2]] = (f["s"][0], fwd[0][0])
    with open(os.path.join(folder, "memory_record.csv"), newline="", encoding="utf-8") as f:
        origin = min(us(r["Timestamp(us)"]) for r in csv.DictReader(f))
    blocks = []  # (alloc, free or None, bytes)
    with open(os.path.join(folder, "operator_memory.csv"), newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            size = int(decimal.Decimal(r["Size(KB)"].strip()) * 1024)
            release = r["Release Time(us)"].strip()
            blocks.append((us(r["Allocation Time(us)"]), us(release) if release else None, size))
    return ops, modules, backward_of, blocks, origin


def from_db(path):
    """The same as from_text, from a torch_npu DB."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    text = dict(db.execute("SELECT id, value FROM STRING_IDS"))
    op_type = db.execute("SELECT id FROM ENUM_API_TYPE WHERE name = 'op'").fetchone()[0]
    ops = collections.defaultdict(list)
    modules = collections.defaultdict(list)
    connection = {}  # op index -> connectionId
    rows = db.execute("SELECT rowid, startNs, endNs, globalTid, name, type, connectionId FROM PYTORCH_API")
    for rowid, start, end, tid, name, kind, conn in rows:
        start, end, name = int(start), int(end), text.get(name, "")
        if kind == op_type:
            ops[tid].append((start, end, rowid))
            if conn is not None:
                connection[rowid] = (tid, start, conn)
        if name.startswith(PREFIX):
            modules[tid].append((start, end, name[len(PREFIX):].strip()))
    groups = collections.defaultdict(list)  # connection value -> [(start, op, thread)]
    values = collections.defaultdict(list)
    for i, v in db.execute("SELECT id, connectionId FROM CONNECTION_IDS"):
        values[i].append(v)
    for op, (tid, start, conn) in connection.items():
        for v in values.get(conn, []):
            groups[v].append((start, op, tid))
    backward_of = {}
    for g in groups.values():
        g.sort()
        fwd_start, _, fwd_thread = g[0]
        for start, op, _ in g[1:]:
            if start > fwd_start:
                backward_of[op] = (fwd_thread, fwd_start)
    # The CSV export's memory_record.csv holds NPU_MEM's samples too (as component APP).
    origin = min(db.execute("SELECT min(timestamp) FROM MEMORY_RECORD").fetchone()[0],
                 db.execute("SELECT min(timestampNs) FROM NPU_MEM").fetchone()[0])
    blocks = [(a, r, s) for a, r, s in db.execute("SELECT allocationTime, releaseTime, size FROM OP_MEMORY")]
    return ops, modules, backward_of, blocks, origin


def ops_at(ops, thread, t):
    """Ops of `thread` containing t, innermost (latest start, then shorter) first."""
    return sorted((o for o in ops[thread] if o[0] <= t <= o[1]), key=lambda o: (-o[0], o[1]))


def main(source, at_ms=None):
    load_source = from_db if source.endswith(".db") else from_text
    ops, modules, backward_of, blocks, origin = load_source(source)

    def path_at(thread, t):
        spans = sorted((m for m in modules[thread] if m[0] <= t <= m[1]), key=lambda m: (m[0], -m[1]))
        return "/".join(m[2] for m in spans)

    def attribute(t):
        found = [(o, th) for th in ops for o in ops[th] if o[0] <= t <= o[1]]
        if not found:
            return ""
        op, thread = min(found, key=lambda x: (-x[0][0], x[0][1] - x[0][0]))
        for o in ops_at(ops, thread, op[0]):
            if o[0] <= op[0] and o[1] >= op[1] and o[2] in backward_of:
                return path_at(*backward_of[o[2]])
        return path_at(thread, op[0])

    if at_ms is None:
        changes = sorted([(a, 1, s) for a, _, s in blocks] + [(r, 0, -s) for _, r, s in blocks if r is not None])
        live = best = 0
        at = None
        for t, _, d in changes:
            live += d
            if live > best:
                best, at = live, t
    else:
        at = origin + int(decimal.Decimal(at_ms) * 1000000)
    every = collections.Counter()
    held = collections.Counter()
    own = collections.Counter()
    count = collections.Counter()
    live = unattributed = 0
    for alloc, free, size in blocks:
        path = attribute(alloc)
        parts = path.split("/") if path else []
        for k in range(1, len(parts) + 1):
            every["/".join(parts[:k])] += 1
        if not (alloc <= at and (free is None or free > at)):
            continue
        live += size
        if not path:
            unattributed += size
            continue
        own[path] += size
        for k in range(1, len(parts) + 1):
            held["/".join(parts[:k])] += size
            count["/".join(parts[:k])] += 1
    print(json.dumps({
        "origin_ns": origin, "at_ns": at, "at_ms": (at - origin) / 1e6, "live_bytes": live,
        "unattributed_bytes": unattributed, "held": held, "self": own, "blocks": count,
        "all_blocks": every,
    }))


if __name__ == "__main__":
    main(sys.argv[1], *sys.argv[2:3])
