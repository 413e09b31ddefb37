"""Memory by module, by brute force over a raw PyTorch profiler trace: the reference that
`memsight modules` is checked against (tests/cli/cli_modules.rs). No memsight code.

    python3 tests/reference/module_attribution.py TRACE.json[.gz] DEVICE_TYPE DEVICE_ID [AT_MS]

(the CPU, device type 0, is one device whatever its id, as PyTorch writes it.)

The rules, as the brief states them:
- the blocks are the device's `[memory]` events with Bytes > 0, each closed by the next free
  (Bytes < 0) at its address; alive at T means allocated at or before T and freed after it;
- T is AT_MS after the device's first memory event, else the first time the device's Total
  Allocated reaches its maximum;
- a block belongs to the modules whose forward span (`python_function` named `nn.Module: X`)
  was open on the allocating thread when it was allocated, except when it was allocated inside
  a backward op the profiler linked to its forward op (a `fwdbwd` flow): then to the modules
  open around that forward op, on the forward op's thread — unless module spans opened inside
  that backward op are open (a checkpointed module's forward run again: recompute): then to
  those, placed where the outermost of them first ran (its first span of that name);
- a module's held bytes are those of the alive blocks attributed to it or to a module under it
  (modules are named by their path from the top: `GPT_0/Block_0/Attention_0`).

Prints JSON: {"origin_ns", "at_ns", "at_ms", "live_bytes", "unattributed_bytes",
"held": {path: bytes}, "self": {path: bytes}, "blocks": {path: count}, "all_blocks": {path:
count of every block of the profile, alive then or not}}.
"""
import bisect
import collections
import decimal
import gzip
import json
import sys

PREFIX = "nn.Module: "


def ns(ts):
    return int(decimal.Decimal(str(ts)) * 1000)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def host_spans(events):
    """The `cpu_op` spans and the module spans by thread, and the `fwdbwd` flows by id."""
    ops = collections.defaultdict(list)  # thread -> [(start, end, index)]
    modules = collections.defaultdict(list)  # thread -> [(start, end, name)]
    flows = {}  # id -> {"s": (thread, ns), "f": (thread, ns)}
    for i, e in enumerate(events):
        ph, cat, name = e.get("ph"), e.get("cat"), e.get("name", "")
        thread = (str(e.get("pid")), str(e.get("tid")))
        if ph == "X" and cat == "cpu_op":
            s = ns(e["ts"])
            ops[thread].append((s, s + ns(e.get("dur", 0)), i))
        elif ph == "X" and cat == "python_function" and name.startswith(PREFIX):
            s = ns(e["ts"])
            modules[thread].append((s, s + ns(e.get("dur", 0)), name[len(PREFIX):].strip()))
        elif cat == "fwdbwd" and ph in ("s", "f"):
            flows.setdefault(str(e.get("id")), {})[ph] = (thread, ns(e["ts"]))
    return ops, modules, flows


def main(path, device_type, device_id, at_ms=None):
    events = load(path)
    ops, modules, flows = host_spans(events)
    memory = []
    for i, e in enumerate(events):
        name = e.get("name", "")
        thread = (str(e.get("pid")), str(e.get("tid")))
        if name == "[memory]":
            a = e.get("args", {})
            if int(a.get("Device Type", -1)) == device_type and (device_type == 0 or int(a.get("Device Id", -1)) == device_id):
                memory.append((ns(e["ts"]), i, thread, int(a["Addr"]), int(a["Bytes"]),
                               int(a["Total Allocated"])))
    memory.sort(key=lambda m: (m[0], m[1]))

    def op_at(thread, t):
        """Ops of `thread` containing t, innermost (latest start) first."""
        return sorted((o for o in ops[thread] if o[0] <= t <= o[1]), key=lambda o: (-o[0], o[1]))

    # A flow binds to the innermost op of its thread around its time.
    backward_of = {}  # backward op index -> (forward thread, forward op start)
    for f in flows.values():
        if "s" in f and "f" in f:
            fwd, bwd = op_at(*f["s"]), op_at(*f["f"])
            if fwd and bwd:
                backward_of[bwd[0][2]] = (f["s"][0], fwd[0][0])

    def path_at(thread, t):
        spans = sorted((m for m in modules[thread] if m[0] <= t <= m[1]), key=lambda m: (m[0], -m[1]))
        return "/".join(m[2] for m in spans)

    first_span = {}  # module name -> (thread, start) of its first span
    for th, spans in modules.items():
        for m in spans:
            if m[2] not in first_span or m[0] < first_span[m[2]][1]:
                first_span[m[2]] = (th, m[0])

    def attribute(thread, t):
        for o in op_at(thread, t):
            if o[2] in backward_of:
                inside = sorted(
                    (m for m in modules[thread] if o[0] <= m[0] <= t <= m[1]),
                    key=lambda m: (m[0], -m[1]),
                )
                if inside:
                    # The recompute: where its outermost module first ran, then the rest.
                    where = path_at(*first_span[inside[0][2]])
                    return "/".join([where] + [m[2] for m in inside[1:]])
                return path_at(*backward_of[o[2]])
        return path_at(thread, t)

    origin = memory[0][0]
    peak = max(m[5] for m in memory)
    at = next(m[0] for m in memory if m[5] == peak)
    if at_ms is not None:
        at = origin + int(decimal.Decimal(at_ms) * 1000000)
    open_blocks = {}
    blocks = []  # (alloc, free or None, bytes, thread)
    for t, _, thread, addr, size, _ in memory:
        if size > 0:
            if addr not in open_blocks:
                open_blocks[addr] = len(blocks)
            blocks.append([t, None, size, thread])
        elif size < 0 and addr in open_blocks:
            blocks[open_blocks.pop(addr)][1] = t
    every = collections.Counter()  # all blocks (alive or not), per module with those under it
    for alloc, _, _, thread in blocks:
        parts = attribute(thread, alloc).split("/")
        for k in range(1, len(parts) + 1):
            if parts[0]:
                every["/".join(parts[:k])] += 1
    held = collections.Counter()
    own = collections.Counter()
    count = collections.Counter()
    live = unattributed = 0
    for alloc, free, size, thread in blocks:
        if not (alloc <= at and (free is None or free > at)):
            continue
        live += size
        path = attribute(thread, alloc)
        if not path:
            unattributed += size
            continue
        own[path] += size
        parts = path.split("/")
        for k in range(1, len(parts) + 1):
            held["/".join(parts[:k])] += size
            count["/".join(parts[:k])] += 1
    print(json.dumps({
        "origin_ns": origin, "at_ns": at, "at_ms": (at - origin) / 1e6, "live_bytes": live,
        "unattributed_bytes": unattributed, "held": held, "self": own, "blocks": count,
        "all_blocks": every,
    }))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:5])
