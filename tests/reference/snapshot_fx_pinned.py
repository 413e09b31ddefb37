"""FX-augmented frames and pinned host memory of an allocator snapshot, by plain arithmetic over
the raw pickle (Python's own pickle module, no memsight code): the reference
`memsight snapshot --json`'s `top_stacks`, `fx_frames_mapped` and `pinned_host` are checked
against (tests/cli/cli_snapshot_fields.rs).

    python3 tests/reference/snapshot_fx_pinned.py SNAPSHOT.pickle TOP

- A frame with an `fx_original_trace` stands for the frames of that traceback text (its
  `File "f", line N, in name` lines, outermost first in the text, innermost first in the stack);
  then a stack's holder is snapshot_summary.holder. fx_frames_mapped: distinct such frames
  (filename, line, name) whose trace has a File line.
- top_stacks: the device's live blocks at the end (active_allocated; a block without frames
  takes those of the last alloc at its address) grouped by stack, heaviest first, the first TOP:
  [holder text, bytes, blocks].
- pinned_host: host_segments' count and total_size; bytes of active_allocated and of
  active_pending_free blocks; host_traces' events (a list of dicts, or of lists of them); the
  running total from (allocated + pending) with the trace undone (alloc adds, free_completed
  subtracts), its peak and the first event that reaches it (null: before the trace); top
  stacks of the allocated blocks as above. null without either key.
"""
import json
import os
import pickle
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snapshot_summary import holder  # noqa: E402

FILE_LINE = re.compile(r'^\s*File "(.*)", line (\d+), in (.*)$')


def expand(frames, mapped):
    out = []
    for f in frames:
        trace = f.get("fx_original_trace") or ""
        model = [
            {"filename": m.group(1), "line": int(m.group(2)), "name": m.group(3).rstrip()}
            for m in (FILE_LINE.match(line) for line in trace.splitlines())
            if m
        ]
        if model:
            mapped.add((f["filename"], f["line"], f["name"]))
            out.extend(reversed(model))
        else:
            out.append(f)
    return out


def text(f):
    return f"{f['filename']}({f['line']}): {f['name']}" if f else None


def top(blocks, trace, mapped, n):
    last_alloc = {}
    for e in trace:
        if e.get("action") == "alloc":
            last_alloc[e["addr"]] = e.get("frames", [])
    groups = {}
    for b in blocks:
        if b["state"] != "active_allocated":
            continue
        frames = b.get("frames") or last_alloc.get(b["address"], [])
        frames = expand(frames, mapped)
        key = json.dumps(frames, sort_keys=True)
        g = groups.setdefault(key, [frames, 0, 0])
        g[1] += b["size"]
        g[2] += 1
    rows = sorted(groups.values(), key=lambda g: (-g[1], -g[2]))
    return [[text(holder(g[0])), g[1], g[2]] for g in rows[:n]]


def main(path, n):
    with open(path, "rb") as f:
        d = pickle.load(f)
    mapped = set()
    segs = d.get("segments", [])
    traces = d.get("device_traces", [])
    for t in traces:
        for e in t:
            expand(e.get("frames", []), mapped)
    device_blocks = [b for s in segs for b in s.get("blocks", [])]
    device_trace = [e for t in traces for e in t]
    out = {"top_stacks": top(device_blocks, device_trace, mapped, n)}
    pinned = None
    if "host_segments" in d or "host_traces" in d:
        hs = d.get("host_segments") or []
        ht = []
        for item in d.get("host_traces") or []:
            ht.extend(item if isinstance(item, (list, tuple)) else [item])
        blocks = [b for s in hs for b in s.get("blocks", [])]
        alloc = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
        pending = sum(b["size"] for b in blocks if b["state"] == "active_pending_free")
        cur = alloc + pending
        for e in ht:
            if e["action"] == "alloc":
                cur -= e["size"]
            elif e["action"] == "free_completed":
                cur += e["size"]
        peak, peak_event = cur, None
        for i, e in enumerate(ht):
            if e["action"] == "alloc":
                cur += e["size"]
            elif e["action"] == "free_completed":
                cur -= e["size"]
            if cur > peak:
                peak, peak_event = cur, i
        pinned = {
            "segments": len(hs),
            "reserved_bytes": sum(s["total_size"] for s in hs),
            "allocated_bytes": alloc,
            "pending_free_bytes": pending,
            "events": len(ht),
            "peak_allocated_bytes": peak,
            "peak_event": peak_event,
            "top_stacks": top(blocks, ht, set(), n),
        }
    out["pinned_host"] = pinned
    out["fx_frames_mapped"] = len(mapped)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
